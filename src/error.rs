//! Errors and exit codes.
//!
//! Exit codes (docs/exit-codes.md, the contract every command keeps): 0 success; 1 something
//! failed (a broken threshold, failed requests under the documented rule, a failed trial, a run
//! the store could not keep, a report that could not be written); 2 bad input (arguments, plan,
//! files) — one clear line, before anything runs; 3 a run's store is damaged (`report`, `export`,
//! `compare`, `run --resume`, `store check`: one line naming the damage); 4 a segment of a split
//! load started later than `--start-at` allowed (nothing run); 130 interrupted by Ctrl-C.

use std::fmt;

/// Bad input from the user: reported as one line, exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Build a bad-input error (exit code 2).
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

/// A run's store that perflab cannot trust (a table, column or row missing, a value of the wrong
/// type, a histogram or sample series that does not decode, a trial naming a point the store does
/// not have): one line naming the damage and what to do, exit code [`EXIT_DAMAGED`].
#[derive(Debug)]
pub struct DamagedStore(pub String);

impl fmt::Display for DamagedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DamagedStore {}

/// The exit code of a damaged store.
pub const EXIT_DAMAGED: i32 = 3;

/// Build a damaged-store error (exit code 3); `crate::store` words the message.
pub fn damaged(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(DamagedStore(msg.into()))
}

/// A segment of a split load (`perflab run --segment i/N --start-at T0`) that could not start its
/// load within the tolerance after the common start: nothing was run, exit code [`EXIT_LATE`].
#[derive(Debug)]
pub struct LateStart(pub String);

impl fmt::Display for LateStart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LateStart {}

/// The exit code of a segment that started too late.
pub const EXIT_LATE: i32 = 4;

/// The exit code for an error that reached `main`.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    if err.chain().any(|e| e.downcast_ref::<DamagedStore>().is_some()) {
        EXIT_DAMAGED
    } else if err.chain().any(|e| e.downcast_ref::<LateStart>().is_some()) {
        EXIT_LATE
    } else if err.chain().any(|e| e.downcast_ref::<UsageError>().is_some()) {
        2
    } else {
        1
    }
}

/// One line for the user: the error chain joined with ": ", newlines flattened, leaving out a
/// cause that only repeats what was already said (SQLite's "database or disk is full" comes back
/// as "Error code 13: database or disk is full").
pub fn one_line(err: &anyhow::Error) -> String {
    let mut said: Vec<String> = Vec::new();
    for e in err.chain() {
        let m = e.to_string();
        if !said.iter().any(|s| m.contains(s.as_str())) {
            said.push(m);
        }
    }
    // One line on a terminal: line breaks become spaces, other control characters (a value's CR,
    // an escape sequence) are shown escaped, never acted on.
    let mut line = String::new();
    for c in said.join(": ").chars() {
        match c {
            '\n' => line.push(' '),
            c if c.is_control() => line.extend(c.escape_default()),
            c => line.push(c),
        }
    }
    line
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_line_leaves_out_a_cause_that_repeats_the_error() {
        let e = anyhow::anyhow!("Error code 13: database or disk is full")
            .context("database or disk is full")
            .context("cannot store trial 3");
        assert_eq!(super::one_line(&e), "cannot store trial 3: database or disk is full");
        let e = anyhow::anyhow!("No such file").context("cannot read plan.toml");
        assert_eq!(super::one_line(&e), "cannot read plan.toml: No such file");
        let e = anyhow::anyhow!("method `GET\r\n\x1b[2J`\nsecond line");
        assert_eq!(super::one_line(&e), "method `GET\\r \\u{1b}[2J` second line");
    }
}
