//! The live line `perflab load` prints on stderr once a second.

use super::interval::Tick;
use std::io::Write;

/// `[   3s]      12345 ops/s  p99     0.09 ms  errors 0`, over the previous line.
pub fn print(t: &Tick, what: &str) {
    let p99 = if t.p99_ms.is_finite() {
        format!("{:.2} ms", t.p99_ms)
    } else {
        "-".into()
    };
    eprint!(
        "\r[{:>4.0}s] {:>10.0} {what}/s  p99 {p99:>10}  errors {:<6}",
        t.t_s + 1.0,
        t.requests_per_s,
        t.errors
    );
    let _ = std::io::stderr().flush();
}
