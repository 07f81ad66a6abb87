//! The tables before the measured phase: sysbench's schema (`sbtestN`: `id`, `k`, `c`, `pad`),
//! `table_size` rows each loaded in batches (one transaction per batch), then the index on `k`;
//! tables in parallel when the database allows it, with a progress line on stderr. Not timed as
//! part of any phase of the load.

use super::backend::{Database, DbError, Row};
use super::config::{PrepareMode, Settings};
use super::scenario::Rng;
use crate::util::cut::Cut;
use crate::util::Cancel;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Rows per batch (one transaction each).
pub const BATCH: u64 = 2000;

/// What prepare did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prepared {
    /// Tables created and loaded (the others were kept).
    pub loaded: Vec<u32>,
    pub rows: u64,
    pub seconds: f64,
}

fn err(e: DbError) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

/// The tables that need loading, as `mode` says.
fn to_load(db: &dyn Database, s: &Settings) -> anyhow::Result<Vec<u32>> {
    let all: Vec<u32> = (1..=s.tables).collect();
    if s.prepare == PrepareMode::Always {
        return Ok(all);
    }
    let mut c = db.connect().map_err(err)?;
    let mut out = Vec::new();
    for t in all {
        let rows = c.table_rows(t).map_err(err)?;
        match (s.prepare, rows) {
            (PrepareMode::Never, None) => {
                anyhow::bail!("prepare = \"never\" but table sbtest{t} does not exist in {}", db.describe())
            }
            (PrepareMode::Auto, r) if r != Some(s.table_size) => out.push(t),
            _ => {}
        }
    }
    Ok(out)
}

/// Create and load the tables that need it; `progress`: a line on stderr. A Ctrl-C ends it within
/// a second, whatever the server does (its sockets are cut: see `util::cut`); the caller tells an
/// interruption from a failure by `cancel`.
pub fn prepare(db: &dyn Database, s: &Settings, cancel: &Cancel, progress: bool) -> anyhow::Result<Prepared> {
    let cut = Cut::new();
    let _armed = cut.arm(cancel, None);
    let _in = cut.enter();
    let t0 = Instant::now();
    if s.prepare == PrepareMode::Auto && s.segment.index > 0 {
        return wait_for_segment_zero(db, s, cancel, progress);
    }
    let tables = to_load(db, s)?;
    if tables.is_empty() {
        return Ok(Prepared::default());
    }
    let total = tables.len() as u64 * s.table_size;
    let done = AtomicU64::new(0);
    let live = progress && std::io::stderr().is_terminal();
    if progress {
        eprintln!(
            "oltp: preparing {} table(s) × {} rows in {}",
            tables.len(),
            s.table_size,
            db.describe()
        );
    }
    let parallel = if db.parallel_load() {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(tables.len())
            .min(s.threads.max(1))
    } else {
        1
    };
    let chunks: Vec<Vec<u32>> = (0..parallel)
        .map(|i| tables.iter().copied().skip(i).step_by(parallel).collect())
        .collect();
    let results: Vec<anyhow::Result<()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                let done = &done;
                let cut = &cut;
                scope.spawn(move || -> anyhow::Result<()> {
                    let _in = cut.enter();
                    let mut c = db.connect().map_err(err)?;
                    for &t in chunk {
                        load_table(c.as_mut(), s, t, cancel, done)?;
                    }
                    Ok(())
                })
            })
            .collect();
        let mut last = Instant::now();
        while live && handles.iter().any(|h| !h.is_finished()) {
            std::thread::sleep(Duration::from_millis(50));
            if last.elapsed() >= Duration::from_millis(500) {
                eprint!("\roltp: {} / {total} rows", done.load(Ordering::Relaxed));
                let _ = std::io::stderr().flush();
                last = Instant::now();
            }
        }
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(anyhow::anyhow!("a prepare thread panicked"))))
            .collect()
    });
    if live {
        eprint!("\r");
    }
    results.into_iter().collect::<anyhow::Result<Vec<()>>>()?;
    let seconds = t0.elapsed().as_secs_f64();
    if progress {
        eprintln!("oltp: prepared {total} rows in {seconds:.1} s");
    }
    Ok(Prepared {
        loaded: tables,
        rows: total,
        seconds,
    })
}

/// How long a segment other than the first waits for the first to load the tables.
const SEGMENT_WAIT: Duration = Duration::from_secs(3600);

/// A segment other than the first (`perflab run --segment i/N`, i > 0) with `prepare = "auto"`
/// loads nothing: segment 0 loads what is missing, and this one waits until every table has its
/// `table_size` rows (checked twice a second, an hour at most, a Ctrl-C ending it), so that N
/// segments sharing one database never load the same table at once.
fn wait_for_segment_zero(db: &dyn Database, s: &Settings, cancel: &Cancel, progress: bool) -> anyhow::Result<Prepared> {
    let t0 = Instant::now();
    let mut said = false;
    loop {
        let missing = to_load(db, s)?;
        if missing.is_empty() {
            return Ok(Prepared::default());
        }
        if progress && !said {
            eprintln!(
                "oltp: segment {} waits for segment 0/{} to load {} table(s) in {}",
                s.segment,
                s.segment.count,
                missing.len(),
                db.describe()
            );
            said = true;
        }
        if t0.elapsed() >= SEGMENT_WAIT {
            anyhow::bail!(
                "segment {}: the tables of {} were still not loaded after {} s (segment 0/{} loads them with prepare = \"auto\")",
                s.segment,
                db.describe(),
                SEGMENT_WAIT.as_secs(),
                s.segment.count
            );
        }
        if cancel.sleep(Duration::from_millis(500)) {
            anyhow::bail!("interrupted while waiting for segment 0/{} to load the tables", s.segment.count);
        }
    }
}

/// sysbench's rows of table `t`: ids 1..=table_size, k drawn like the ids, c and pad digits.
fn load_table(c: &mut dyn super::backend::Conn, s: &Settings, t: u32, cancel: &Cancel, done: &AtomicU64) -> anyhow::Result<()> {
    c.create_table(t).map_err(err)?;
    let mut rng = Rng::new(s.seed ^ (u64::from(t) << 32));
    let mut id = 1u64;
    while id <= s.table_size {
        if cancel.is_cancelled() {
            anyhow::bail!("interrupted while loading sbtest{t}");
        }
        let end = (id + BATCH - 1).min(s.table_size);
        let rows: Vec<Row> = (id..=end)
            .map(|i| Row {
                id: i as i64,
                k: rng.id(s.rand, s.table_size),
                c: rng.c_value(),
                pad: rng.pad_value(),
            })
            .collect();
        c.load(t, &rows).map_err(err)?;
        done.fetch_add(end - id + 1, Ordering::Relaxed);
        id = end + 1;
    }
    c.create_index(t).map_err(err)?;
    Ok(())
}

/// Drop the tables (`cleanup = true`); a Ctrl-C ends it as it ends [`prepare`].
pub fn cleanup(db: &dyn Database, s: &Settings, cancel: &Cancel) -> anyhow::Result<()> {
    let cut = Cut::new();
    let _armed = cut.arm(cancel, None);
    let _in = cut.enter();
    let mut c = db.connect().map_err(err)?;
    for t in 1..=s.tables {
        c.drop_table(t).map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Segment;

    #[test]
    fn a_later_segment_waits_for_the_first_to_load_the_tables_and_loads_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shared.db");
        let c = super::super::config::OltpConfig {
            table_size: Some(3000),
            tables: Some(2),
            threads: Some(2),
            ..Default::default()
        };
        let whole = super::super::config::prepare(&c).unwrap();
        let seg = |i| whole.segmented(Segment::new(i, 2).unwrap()).unwrap();
        let (s0, s1) = (seg(0), seg(1));
        let cancel = Cancel::new();
        let db1 = super::super::sqlite::open(path.to_str().unwrap()).unwrap();
        let db0 = super::super::sqlite::open(path.to_str().unwrap()).unwrap();
        let waited = std::thread::scope(|scope| {
            let waiter = scope.spawn(|| prepare(db1.as_ref(), &s1, &cancel, false));
            // Segment 1 is waiting (nothing loaded yet); segment 0 loads both tables.
            std::thread::sleep(Duration::from_millis(300));
            let loaded = prepare(db0.as_ref(), &s0, &cancel, false).expect("segment 0 loads");
            assert_eq!(loaded.loaded, vec![1, 2]);
            waiter.join().unwrap()
        });
        assert_eq!(waited.expect("segment 1 waited"), Prepared::default(), "segment 1 loaded nothing");
        // A Ctrl-C ends the wait.
        let other = dir.path().join("empty.db");
        let db = super::super::sqlite::open(other.to_str().unwrap()).unwrap();
        let stop = Cancel::new();
        stop.cancel();
        let e = prepare(db.as_ref(), &s1, &stop, false).unwrap_err();
        assert!(e.to_string().contains("interrupted while waiting for segment 0/2"), "{e}");
    }
}
