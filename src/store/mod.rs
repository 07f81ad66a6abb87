//! The store: one SQLite database per run, written trial by trial; CSV/JSON export.
