//! The io_uring engine: one ring per job, `iodepth` operations kept in flight, each timed from the
//! moment its slot was free (the completion before it in that slot was reaped, or the start) to the
//! moment its own completion is reaped: fio's `lat`, whose mean is depth ÷ IOPS (Little's law).
//! Timing from the system call that submits it instead would leave out the time a freed slot waits
//! while the loop submits the refills before it, one system call each (at depth 32 that read 16 %
//! below depth ÷ IOPS, and below fio's).
//!
//! The ring is set up as fio's io_uring engine sets up its own (fio 3.33 and later): one task
//! submits and reaps (`SINGLE_ISSUER`), and the kernel runs completion work only when that task asks
//! for completions (`DEFER_TASKRUN`, `COOP_TASKRUN`) instead of interrupting it; on a kernel without
//! these flags (before 6.1) the ring is a plain one. Each operation is submitted on its own, as
//! fio does by default (`iodepth_batch_submit = 1`): of k slots freed by one reap, k − 1 are
//! submitted one by one and the last goes with the wait for the next completion, so depth 1 costs
//! one system call per operation. Submitting a refill as one batch would let the block layer plug
//! it and hand the device k requests at once, which changes the latencies the device gives (the
//! p50 at depth 32 read about 1.2 × fio's that way). Nothing is allocated per operation.

use super::file;
use super::job::{outcome, stamp, Aligned, Books, JobStats, Pattern, Rng, Shared};
use crate::workload::driver::interval::Message;
use io_uring::{opcode, types, IoUring};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::time::Instant;

/// Can this process make a ring of `depth` entries? The error says why not (seccomp, a sysctl).
pub fn probe(depth: usize) -> Result<(), String> {
    ring(depth).map(drop).map_err(|e| e.to_string())
}

/// A ring of `depth` entries for one thread, with fio's flags where the kernel has them.
fn ring(depth: usize) -> std::io::Result<IoUring> {
    let n = entries(depth);
    IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_coop_taskrun()
        .build(n)
        .or_else(|_| IoUring::builder().setup_coop_taskrun().build(n))
        .or_else(|_| IoUring::new(n))
}

fn entries(depth: usize) -> u32 {
    depth.next_power_of_two().max(1) as u32
}

#[derive(Clone, Copy)]
struct Slot {
    read: bool,
    offset: u64,
    sent: Instant,
    measured: bool,
}

/// Run job `id` until the run is over; its operations, counts and kernel counters.
pub fn job(sh: &Shared, id: usize, tx: Sender<Message>) -> anyhow::Result<JobStats> {
    let p = &sh.p;
    let f = file::open(p)?;
    let fd = types::Fd(f.as_raw_fd());
    let depth = p.iodepth;
    let mut ring = ring(depth).map_err(|e| anyhow::anyhow!("io_uring: {e}"))?;
    let mut rng = Rng::seeded(1000 + id as u64);
    let mut bufs: Vec<Aligned> = (0..depth).map(|_| Aligned::new(p.bs as usize, &mut rng)).collect();
    let mut slots: Vec<Option<Slot>> = vec![None; depth];
    let mut free: Vec<usize> = (0..depth).rev().collect();
    // An operation pushed since the last submission.
    let mut unsubmitted = false;
    let mut pattern = Pattern::new(p, id, p.jobs);
    let mut books = Books::new(sh.timing, tx);
    let mut ending = false;
    loop {
        let now = Instant::now();
        books.flush(now, false);
        ending |= sh.over(now);
        let inflight = depth - free.len();
        let sync_due = p.fsync > 0 && books.writes_since_sync >= p.fsync;
        if sync_due && inflight == 0 && !ending {
            // fsync=N: the N writes are complete; make them durable before the next ones.
            if let Err(e) = f.sync_all() {
                books.error(format!("fsync: {e}"));
                sh.stop.store(true, Ordering::Relaxed);
            }
            books.stats.fsyncs += 1;
            books.writes_since_sync = 0;
            continue;
        }
        while !ending && !sync_due {
            let Some(slot) = free.pop() else { break };
            // One submission per operation, as fio's default (iodepth_batch_submit = 1): the one
            // before this is submitted now, on its own, and the last one of a refill goes with the
            // wait below (so depth 1 stays one system call per operation).
            if unsubmitted {
                // A failure leaves it in the ring for the next call.
                let _ = ring.submit();
            }
            let (read, offset) = pattern.next_op();
            let measured = books.measured(now);
            if measured && !sh.claim() {
                free.push(slot);
                ending = true;
                break;
            }
            let buf = bufs[slot].bytes_mut();
            if !read {
                stamp(buf, offset);
            }
            let (ptr, len) = (buf.as_mut_ptr(), buf.len() as u32);
            let sqe = if read {
                opcode::Read::new(fd, ptr, len).offset(offset).build()
            } else {
                opcode::Write::new(fd, ptr, len).offset(offset).build()
            };
            slots[slot] = Some(Slot {
                read,
                offset,
                sent: now,
                measured,
            });
            // SAFETY: the buffer (`bufs[slot]`) and the file descriptor (`f`) live until this
            // function returns, which is only after every submitted operation was reaped (the loop
            // ends with nothing in flight); a slot's buffer is not reused before its completion.
            let ok = unsafe { ring.submission().push(&sqe.user_data(slot as u64)) };
            if ok.is_err() {
                slots[slot] = None;
                free.push(slot);
                break;
            }
            unsubmitted = true;
        }
        if depth == free.len() {
            if ending {
                break;
            }
            continue;
        }
        unsubmitted = false;
        match ring.submit_and_wait(1) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(e) => {
                books.error(format!("io_uring_enter: {e}"));
                sh.stop.store(true, Ordering::Relaxed);
                // Operations may still be in flight: wait for them without submitting more.
                ending = true;
                if ring.submit_and_wait(depth - free.len()).is_err() {
                    break;
                }
            }
        }
        let done = Instant::now();
        for cqe in ring.completion() {
            let slot = cqe.user_data() as usize;
            let Some(s) = slots.get_mut(slot).and_then(Option::take) else {
                continue;
            };
            free.push(slot);
            let r = outcome(s.read, s.offset, p.bs, i64::from(cqe.result()));
            if r.is_err() {
                sh.stop.store(true, Ordering::Relaxed);
            }
            books.done(s.read, s.measured, done.saturating_duration_since(s.sent), r);
        }
    }
    Ok(books.finish())
}
