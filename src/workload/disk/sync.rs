//! The synchronous engine, where io_uring is not allowed (or `engine = "sync"`): one thread per
//! operation in flight (`jobs × iodepth` threads), each calling pread/pwrite and timing the call.

use super::file;
use super::job::{outcome, stamp, Aligned, Books, JobStats, Pattern, Rng, Shared};
use crate::workload::driver::interval::Message;
use std::os::unix::fs::FileExt;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::time::Instant;

/// Run thread `id` of `of` until the run is over.
pub fn thread(sh: &Shared, id: usize, of: usize, tx: Sender<Message>) -> anyhow::Result<JobStats> {
    let p = &sh.p;
    let f = file::open(p)?;
    let mut rng = Rng::seeded(1000 + id as u64);
    let mut buf = Aligned::new(p.bs as usize, &mut rng);
    let mut pattern = Pattern::new(p, id, of);
    let mut books = Books::new(sh.timing, tx);
    loop {
        let now = Instant::now();
        books.flush(now, false);
        if sh.over(now) {
            break;
        }
        if p.fsync > 0 && books.writes_since_sync >= p.fsync {
            if let Err(e) = f.sync_all() {
                books.error(format!("fsync: {e}"));
                sh.stop.store(true, Ordering::Relaxed);
            }
            books.stats.fsyncs += 1;
            books.writes_since_sync = 0;
            continue;
        }
        let (read, offset) = pattern.next_op();
        let measured = books.measured(now);
        if measured && !sh.claim() {
            break;
        }
        let sent = Instant::now();
        let res = if read {
            f.read_at(buf.bytes_mut(), offset)
        } else {
            stamp(buf.bytes_mut(), offset);
            f.write_at(buf.bytes(), offset)
        };
        let lat = sent.elapsed();
        let res = res
            .map(|n| n as i64)
            .unwrap_or_else(|e| -i64::from(e.raw_os_error().unwrap_or(libc::EIO)));
        let r = outcome(read, offset, p.bs, res);
        if r.is_err() {
            sh.stop.store(true, Ordering::Relaxed);
        }
        books.done(read, measured, lat, r);
    }
    Ok(books.finish())
}
