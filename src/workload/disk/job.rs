//! What every disk job shares, whatever its engine: the offsets it visits, its aligned buffers, the
//! per-direction counts and histograms it keeps, the per-second intervals it sends the driver and
//! the kernel's own I/O counters of its thread (`/proc/thread-self/io`).

use super::config::Prepared;
use crate::workload::driver::clock::us;
use crate::workload::driver::coordinator::Timing;
use crate::workload::driver::interval::{Interval, Message};
use crate::workload::result::latency_histogram;
use hdrhistogram::Histogram;
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// What all jobs of a run share: the settings, the clock, the stop flag and the operation budget.
pub struct Shared {
    pub p: Prepared,
    pub timing: Timing,
    pub deadline: Instant,
    pub stop: AtomicBool,
    pub issued: AtomicU64,
}

impl Shared {
    /// May a measured operation start? (false once the `ops` budget is spent)
    pub fn claim(&self) -> bool {
        self.p.ops.is_none_or(|n| self.issued.fetch_add(1, Ordering::Relaxed) < n)
    }

    /// The run is over for new operations.
    pub fn over(&self, now: Instant) -> bool {
        self.stop.load(Ordering::Relaxed) || now >= self.deadline
    }
}

/// One direction's counts.
#[derive(Clone, Debug)]
pub struct Dir {
    pub ops: u64,
    pub bytes: u64,
    pub latency: Histogram<u64>,
}

impl Dir {
    fn new() -> Dir {
        Dir {
            ops: 0,
            bytes: 0,
            latency: latency_histogram(),
        }
    }

    pub fn merge(&mut self, o: &Dir) {
        self.ops += o.ops;
        self.bytes += o.bytes;
        let _ = self.latency.add(&o.latency);
    }
}

/// The kernel's I/O counters of a thread: bytes that went to storage and read/write system calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct KernelIo {
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub syscr: u64,
    pub syscw: u64,
}

impl KernelIo {
    /// The calling thread's counters (zero where /proc does not have them).
    pub fn now() -> KernelIo {
        // One read() of a small buffer: the file is a few lines long.
        let mut buf = [0u8; 512];
        let n = std::fs::File::open("/proc/thread-self/io")
            .and_then(|mut f| f.read(&mut buf))
            .unwrap_or(0);
        let text = String::from_utf8_lossy(&buf[..n]);
        let field = |k: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(k)?.strip_prefix(':'))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0)
        };
        KernelIo {
            read_bytes: field("read_bytes"),
            write_bytes: field("write_bytes"),
            syscr: field("syscr"),
            syscw: field("syscw"),
        }
    }

    pub fn since(self, before: KernelIo) -> KernelIo {
        KernelIo {
            read_bytes: self.read_bytes.saturating_sub(before.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(before.write_bytes),
            syscr: self.syscr.saturating_sub(before.syscr),
            syscw: self.syscw.saturating_sub(before.syscw),
        }
    }

    pub fn add(&mut self, o: KernelIo) {
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
        self.syscr += o.syscr;
        self.syscw += o.syscw;
    }
}

/// One job's (or all jobs') result.
#[derive(Clone, Debug)]
pub struct JobStats {
    pub read: Dir,
    pub write: Dir,
    pub fsyncs: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    /// Operations of warm-up and load together (for the CPU per I/O).
    pub all_ops: u64,
    /// The kernel's counters of the job's thread over the measured phase.
    pub kernel: KernelIo,
}

impl JobStats {
    pub fn new() -> JobStats {
        JobStats {
            read: Dir::new(),
            write: Dir::new(),
            fsyncs: 0,
            errors: 0,
            first_error: None,
            all_ops: 0,
            kernel: KernelIo::default(),
        }
    }

    pub fn merge(&mut self, o: &JobStats) {
        self.read.merge(&o.read);
        self.write.merge(&o.write);
        self.fsyncs += o.fsyncs;
        self.errors += o.errors;
        self.all_ops += o.all_ops;
        self.kernel.add(o.kernel);
        if self.first_error.is_none() {
            self.first_error = o.first_error.clone();
        }
    }

    pub fn ops(&self) -> u64 {
        self.read.ops + self.write.ops
    }
}

impl Default for JobStats {
    fn default() -> JobStats {
        JobStats::new()
    }
}

/// The project's seeded generator (`util::rng`), seeded per job so runs repeat their offsets and
/// their data.
pub use crate::util::rng::Rng;

/// The operations one job (or one synchronous thread) issues: direction and offset of each.
pub struct Pattern {
    rng: Rng,
    blocks: u64,
    cursor: u64,
    bs: u64,
    random: bool,
    read_pct: f64,
}

/// Stream `id` of `of` of a segment's jobs as the whole load's stream and stream count.
fn whole_stream(p: &Prepared, id: usize, of: usize) -> (usize, usize) {
    if p.segment.is_whole() {
        return (id, of);
    }
    let per_job = (of / p.jobs.max(1)).max(1);
    let (job, slot) = (id / per_job, id % per_job);
    (
        p.segment.global(job as u64) as usize * per_job + slot,
        p.whole_jobs.max(p.jobs) * per_job,
    )
}

impl Pattern {
    /// Stream `id` of `of`: sequential streams start at their share of the file. In a segment
    /// (`p.segment`), the stream is the one the whole load's job has: stream `id` belongs to job
    /// `id / (of / jobs)` here, the whole load's job `segment.global(job)`.
    pub fn new(p: &Prepared, id: usize, of: usize) -> Pattern {
        let (id, of) = whole_stream(p, id, of);
        let blocks = p.size / p.bs;
        Pattern {
            rng: Rng::seeded(id as u64 + 1),
            blocks,
            cursor: blocks * id as u64 / of.max(1) as u64,
            bs: p.bs,
            random: p.rw.random(),
            read_pct: p.read_pct,
        }
    }

    /// The next operation: (is it a read, its offset in bytes).
    pub fn next_op(&mut self) -> (bool, u64) {
        let read = if self.read_pct >= 100.0 {
            true
        } else if self.read_pct <= 0.0 {
            false
        } else {
            ((self.rng.below(10_000)) as f64) < self.read_pct * 100.0
        };
        let block = if self.random {
            self.rng.below(self.blocks)
        } else {
            let b = self.cursor;
            self.cursor = (self.cursor + 1) % self.blocks;
            b
        };
        (read, block * self.bs)
    }
}

/// A buffer of `len` bytes aligned to 4 KiB (what O_DIRECT needs), inside a plain vector.
pub struct Aligned {
    buf: Vec<u8>,
    at: usize,
    len: usize,
}

impl Aligned {
    pub fn new(len: usize, rng: &mut Rng) -> Aligned {
        let mut buf = vec![0u8; len + 4096];
        let at = buf.as_ptr().align_offset(4096);
        rng.fill(&mut buf[at..at + len]);
        Aligned { buf, at, len }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.at..self.at + self.len]
    }

    pub fn bytes(&self) -> &[u8] {
        &self.buf[self.at..self.at + self.len]
    }
}

/// A job's bookkeeping while it runs: the counts, the cutover, the current second's interval.
pub struct Books {
    pub stats: JobStats,
    iv: Interval,
    kernel_from: Option<KernelIo>,
    measure_from: Instant,
    tx: Sender<Message>,
    pub writes_since_sync: u64,
}

impl Books {
    pub fn new(timing: Timing, tx: Sender<Message>) -> Books {
        Books {
            stats: JobStats::new(),
            iv: Interval::new(0),
            kernel_from: None,
            measure_from: timing.measure_from,
            tx,
            writes_since_sync: 0,
        }
    }

    /// Called before each operation is issued: is it measured? (takes the kernel's counters at the
    /// first measured one)
    pub fn measured(&mut self, at: Instant) -> bool {
        if at < self.measure_from {
            return false;
        }
        if self.kernel_from.is_none() {
            self.kernel_from = Some(KernelIo::now());
        }
        true
    }

    /// One completed operation.
    pub fn done(&mut self, read: bool, measured: bool, lat: Duration, result: Result<u64, String>) {
        self.stats.all_ops += 1;
        if !read {
            self.writes_since_sync += 1;
        }
        if !measured {
            if let Err(e) = result {
                self.error(e);
            }
            return;
        }
        let d = if read { &mut self.stats.read } else { &mut self.stats.write };
        let l = us(lat);
        let _ = d.latency.record(l);
        let _ = self.iv.latency.record(l);
        self.iv.responses += 1;
        d.ops += 1;
        match result {
            Ok(n) => d.bytes += n,
            Err(e) => {
                self.iv.errors += 1;
                self.error(e);
            }
        }
    }

    pub fn error(&mut self, e: String) {
        self.stats.errors += 1;
        self.stats.first_error.get_or_insert(e);
    }

    /// Send each finished second to the driver (`last`: and the partial one).
    pub fn flush(&mut self, now: Instant, last: bool) {
        crate::workload::driver::interval::flush(&mut self.iv, self.measure_from, now, last, &self.tx);
    }

    /// The job is over: the last interval and the kernel's counters over the measured phase.
    pub fn finish(mut self) -> JobStats {
        self.flush(Instant::now(), true);
        if let Some(k0) = self.kernel_from {
            self.stats.kernel = KernelIo::now().since(k0);
        }
        self.stats
    }
}

/// Mark a block about to be written with its offset (its first 8 bytes, little-endian), so that
/// the file shows which blocks a run wrote; the rest of the block stays incompressible.
pub fn stamp(buf: &mut [u8], offset: u64) {
    buf[..8].copy_from_slice(&offset.to_le_bytes());
}

/// `read at 4096: Input/output error (os error 5)` from a negative errno or a short transfer.
pub fn outcome(read: bool, offset: u64, want: u64, res: i64) -> Result<u64, String> {
    let what = if read { "read" } else { "write" };
    if res < 0 {
        let e = std::io::Error::from_raw_os_error(-res as i32);
        return Err(format!("{what} at offset {offset}: {e}"));
    }
    if res as u64 != want {
        return Err(format!("{what} at offset {offset}: {res} of {want} bytes (short transfer)"));
    }
    Ok(want)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_segments_streams_are_the_whole_loads_each_once() {
        let whole = crate::workload::disk::config::prepare(&crate::workload::disk::config::DiskConfig {
            rw: Some("randread".into()),
            size: Some(crate::workload::mem::size::SizeSpec::Bytes(64 * 4096)),
            jobs: Some(5),
            iodepth: Some(3),
            ops: Some(1001),
            ..Default::default()
        })
        .expect("prepared");
        // One stream per job (io_uring) or per operation in flight (the synchronous engine).
        for per_job in [1, 3] {
            let of = whole.jobs * per_job;
            let mut streams = Vec::new();
            let mut ops = 0;
            for index in 0..2 {
                let seg = whole.segmented(crate::model::Segment::new(index, 2).unwrap()).unwrap();
                ops += seg.ops.unwrap();
                for id in 0..seg.jobs * per_job {
                    let (g, n) = whole_stream(&seg, id, seg.jobs * per_job);
                    assert_eq!(n, of);
                    streams.push(g);
                }
            }
            streams.sort_unstable();
            assert_eq!(streams, (0..of).collect::<Vec<_>>(), "{per_job} per job");
            assert_eq!(ops, 1001);
        }
        assert_eq!(whole_stream(&whole, 4, 15), (4, 15), "the whole load is itself");
        let err = whole.segmented(crate::model::Segment::new(5, 6).unwrap()).unwrap_err();
        assert!(err.contains("5 jobs cannot be split into 6 segments"), "{err}");
    }

    #[test]
    fn sequential_streams_wrap_and_random_offsets_stay_in_the_file() {
        let p = crate::workload::disk::config::prepare(&crate::workload::disk::config::DiskConfig {
            rw: Some("read".into()),
            size: Some(crate::workload::mem::size::SizeSpec::Bytes(4 * 4096)),
            ..Default::default()
        })
        .expect("prepared");
        let mut s = Pattern::new(&p, 1, 2);
        let offs: Vec<u64> = (0..5).map(|_| s.next_op().1).collect();
        assert_eq!(offs, [8192, 12288, 0, 4096, 8192]);
        let mut r = Pattern {
            random: true,
            ..Pattern::new(&p, 0, 1)
        };
        assert!((0..1000)
            .map(|_| r.next_op())
            .all(|(read, o)| read && o % 4096 == 0 && o < 4 * 4096));
        assert!(outcome(true, 0, 4096, -5)
            .expect_err("EIO")
            .starts_with("read at offset 0: Input/output error"));
        assert!(outcome(false, 8, 4096, 100).expect_err("short").contains("short transfer"));
    }
}
