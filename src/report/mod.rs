//! Reports: terminal, Markdown, HTML and SVG, from the store.

pub mod cli;
