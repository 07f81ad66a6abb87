//! Helpers several test modules share: a free loopback port, a plan written to disk, and the one
//! run directory a run left behind.

use std::path::{Path, PathBuf};

/// A loopback port that was free a moment ago (bound to port 0, read, released).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    l.local_addr().expect("its address").port()
}

/// `body` written to `dir/plan.toml`.
pub fn write_plan(dir: &Path, body: &str) -> PathBuf {
    let p = dir.join("plan.toml");
    std::fs::write(&p, body).expect("write plan");
    p
}

/// The run directory under `runs`, which must be the only one.
pub fn only_run_dir(runs: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(runs)
        .expect("runs dir")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(dirs.len(), 1, "exactly one run directory: {dirs:?}");
    dirs[0].clone()
}
