//! Room kept for the end of a run: a run directory holds a small file of zeros
//! ([`RESERVE_FILE`], [`RESERVE_BYTES`]) while the run is going on, removed just before the run's
//! final status is written. When the disk fills up during a run, the end of the run (status
//! `failed` with its reason) still has room in the database.

use std::io::Write;
use std::path::Path;

/// The file that keeps the room, in the run directory while the run is going on.
pub const RESERVE_FILE: &str = "space.reserve";

/// How much room it keeps: enough for the last writes of a run (a few database pages).
pub const RESERVE_BYTES: usize = 256 * 1024;

/// Take the room (written out, so a full disk is found now, not at the end of the run).
pub fn take(dir: &Path) -> std::io::Result<()> {
    let path = dir.join(RESERVE_FILE);
    let written = std::fs::File::create(&path).and_then(|mut f| {
        f.write_all(&vec![0u8; RESERVE_BYTES])?;
        f.sync_all()
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&path);
    }
    written
}

/// Give the room back (nothing to do when it was never taken).
pub fn release(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(RESERVE_FILE));
}
