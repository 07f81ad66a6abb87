//! `perflab http`: the HTTP load generator (closed and open model, HTTP/1.1, h2, TLS).

pub mod cli;
