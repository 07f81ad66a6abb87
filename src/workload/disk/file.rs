//! The file a disk run works on: laid out before the measured phase (written in full with
//! incompressible data, synced, and its pages dropped from the cache), opened once per job with
//! O_DIRECT when asked, and removed after the run unless `keep = true` (only what perflab made).

use super::config::{Prepared, Target};
use super::job::{Aligned, Rng};
use crate::workload::mem::size::human;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// What the layout made, removed on drop unless kept.
pub struct Laid {
    /// The file perflab created (None: it existed, or it is a device).
    made_file: Option<PathBuf>,
    /// The temporary directory perflab created for it.
    made_dir: Option<PathBuf>,
    keep: bool,
    /// Bytes written by the layout.
    pub written: u64,
}

impl Drop for Laid {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        if let Some(f) = &self.made_file {
            let _ = std::fs::remove_file(f);
        }
        if let Some(d) = &self.made_dir {
            let _ = std::fs::remove_dir(d);
        }
    }
}

fn located(p: &Prepared, what: &str, e: std::io::Error) -> anyhow::Error {
    anyhow::anyhow!("{what} {}: {e}", p.target.path().display())
}

/// Lay out the target: create it (and its temporary directory) if needed and write whatever part of
/// `size` it lacks. A device is used as it is.
pub fn lay_out(p: &Prepared) -> anyhow::Result<Laid> {
    let mut laid = Laid {
        made_file: None,
        made_dir: None,
        keep: p.keep,
        written: 0,
    };
    let Target::File { path, temp } = &p.target else {
        return Ok(laid);
    };
    if *temp {
        if let Some(d) = path.parent() {
            std::fs::create_dir(d).map_err(|e| located(p, "cannot make the directory of", e))?;
            laid.made_dir = Some(d.to_path_buf());
        }
    }
    let existed = path.exists();
    let mut f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| located(p, "cannot create", e))?;
    if !existed {
        laid.made_file = Some(path.clone());
    }
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len < p.size {
        // Whole blocks from the last whole one on, so that the file holds `size` bytes of new data.
        let from = len / p.bs * p.bs;
        f.seek(SeekFrom::Start(from)).map_err(|e| located(p, "cannot lay out", e))?;
        let mut rng = Rng::seeded(0x5EED);
        let mut chunk = Aligned::new(1 << 20, &mut rng);
        let mut at = from;
        while at < p.size {
            let n = (p.size - at).min(1 << 20) as usize;
            rng.fill(&mut chunk.bytes_mut()[..n]);
            f.write_all(&chunk.bytes()[..n])
                .map_err(|e| anyhow::anyhow!("laying out {} of {}: {e} after {}", human(p.size), path.display(), human(at - from)))?;
            at += n as u64;
        }
        f.sync_all().map_err(|e| located(p, "cannot sync", e))?;
        laid.written = at - from;
    }
    drop_cache(&f);
    Ok(laid)
}

/// Ask the kernel to drop the file's cached pages (as fio's `invalidate=1`), so that a buffered run
/// does not start with the layout in memory.
pub fn drop_cache(f: &File) {
    // SAFETY: the descriptor is open for the whole call; posix_fadvise only gives the kernel advice.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
}

/// Open the target for one job: read-write when the pattern writes, O_DIRECT when asked.
pub fn open(p: &Prepared) -> anyhow::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(p.rw.writes());
    if p.direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(p.target.path()).map_err(|e| {
        if p.direct && e.raw_os_error() == Some(libc::EINVAL) {
            anyhow::anyhow!(
                "{} ({}) does not take direct I/O: say direct = false",
                p.target.path().display(),
                p.fs
            )
        } else {
            located(p, "cannot open", e)
        }
    })
}
