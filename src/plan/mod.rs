//! Plans: parse a TOML plan, validate it with file:line:column errors, expand the matrix into trials.
