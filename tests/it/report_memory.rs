//! The report's memory, counted by this test binary's allocator on the test's own thread (the
//! report is built and written on the thread that asks for it): it never holds its files whole
//! (the HTML page goes straight to its file, each trial's time series is dropped once drawn), so
//! its peak stays below the size of what it writes; with more repetitions it does not grow by
//! their samples (the bottleneck rules read one trial of a point at a time). A store keeps
//! nothing per trial it wrote, so a long run's memory stays flat.

use perflab::store::{RunInfo, RunStatus, Store, TaggedSample, TrialRecord};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;

/// The system allocator, counting the bytes live and their peak per thread.
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    // `try_with`: nothing is counted while the thread's locals are torn down.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is passed to the system allocator unchanged; the counting only reads and
// writes two thread-local cells, which allocate nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on as it is.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (every allocation goes through it).
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`; the caller's contract for `realloc` is passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Bytes this thread allocated at most during `f`, above what it held when `f` began.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let out = f();
    let peak = PEAK.with(Cell::get);
    (out, (peak - start).max(0) as usize)
}

const POINTS: usize = 6;
/// Samples per trial (every 10 ms through a 2 s trial).
const SAMPLES: usize = 200;

/// A finished run of `POINTS` points × `reps` repetitions, each trial with `SAMPLES` samples of
/// the key metrics the charts draw and 40 others.
fn run_of(dir: &Path, reps: usize) {
    let mut s = Store::create(dir).unwrap();
    s.write_run(&RunInfo {
        plan_name: "memory".into(),
        plan_file: "memory.toml".into(),
        plan_source: "name = \"memory\"".into(),
        seed: 1,
        started_unix: 1_800_000_000.0,
        planned_trials: POINTS * reps,
    })
    .unwrap();
    let mut id = 0;
    for point in 0..POINTS {
        let params = format!(r#"{{"n":{}}}"#, point + 1);
        s.write_point(point, &format!("n={}", point + 1), &params, reps as u32, Some("fixed"))
            .unwrap();
        for rep in 0..reps {
            s.write_trial(&trial(id, point, rep, &params)).unwrap();
            id += 1;
        }
    }
    s.finish_run(RunStatus::Complete, 1_800_001_000.0).unwrap();
}

fn trial(id: usize, point: usize, rep: usize, params: &str) -> TrialRecord {
    let samples = (0..SAMPLES)
        .map(|i| {
            let t_s = 0.01 * i as f64;
            let phase = match i * 4 / SAMPLES {
                0 => "baseline",
                3 => "recovery",
                _ => "load",
            };
            let busy = if phase == "load" { 60.0 } else { 5.0 } + ((i * 7 + id) % 10) as f64;
            let mut values = vec![
                ("cpu_busy_pct".to_string(), busy),
                ("mem_used_mb".to_string(), 1000.0 + (i / 20) as f64),
                ("proc_target_cpu_pct".to_string(), busy * 1.5),
                ("disk_sda_util_pct".to_string(), busy / 2.0),
                ("net_lo_rx_mbitps".to_string(), busy * 3.0),
            ];
            values.extend((0..40).map(|m| (format!("other_{m:02}_per_s"), ((i * m) % 17) as f64)));
            TaggedSample {
                phase: phase.into(),
                t_s,
                unix_s: 1_800_000_000.0 + 3.0 * id as f64 + t_s,
                values,
            }
        })
        .collect();
    crate::common::exec_trial(id, point, rep as u32 + 1, params, 1_800_000_000.0 + 3.0 * id as f64, samples)
}

/// The report of a run of `reps` repetitions per point: its peak heap and the bytes it wrote.
fn report_of(dir: &Path, reps: usize) -> (usize, usize) {
    let run = dir.join(format!("run{reps}"));
    run_of(&run, reps);
    let out = dir.join(format!("report{reps}"));
    let (paths, peak) = peak_during(|| perflab::report::write(&[&run], &out, perflab::report::Formats::all(), false));
    let paths = paths.unwrap();
    assert_eq!(paths.charts.len(), POINTS, "one time-series chart per point");
    let written = crate::common::files_under(&out).iter().map(|(_, bytes)| bytes.len()).sum();
    (peak, written)
}

/// Bytes of one trial's samples as a table (one f64 per metric and sample).
const TRIAL_TABLE: usize = SAMPLES * 45 * 8;

#[test]
fn the_report_never_holds_its_files_whole_and_grows_only_with_one_points_repetitions() {
    let tmp = tempfile::tempdir().unwrap();
    let (few, written_few) = report_of(tmp.path(), 2);
    let (many, written_many) = report_of(tmp.path(), 8);
    eprintln!(
        "report peak heap: {few} B for {} trials ({written_few} B written), {many} B for {} trials ({written_many} B written)",
        2 * POINTS,
        8 * POINTS
    );
    // Never the report whole in memory: neither the HTML page (which inlines every chart) nor
    // every chart beside it as well as the trials' time series.
    assert!(
        few < written_few,
        "the report's peak ({few} B) is above the size of the files it wrote ({written_few} B)"
    );
    // Four times the trials: the same points, charts and tables; the bottleneck rules read a
    // point's trials one at a time (not pooled), so the peak grows by less than a quarter of one
    // trial's samples (the trials' own records), never by the repetitions' samples.
    let bound = few + TRIAL_TABLE / 4;
    assert!(
        many <= bound,
        "the report's peak grew with the repetitions' samples: {few} B for {} trials, {many} B for {} (at most {bound})",
        2 * POINTS,
        8 * POINTS
    );
}

/// Bytes this thread holds now.
fn live() -> isize {
    LIVE.with(Cell::get)
}

#[test]
fn a_store_keeps_nothing_per_trial_it_wrote() {
    // What a long run holds of its store does not grow with the trials: between the 20th and the
    // 120th trial written, neither the store's own structures (counted by this binary's
    // allocator) nor SQLite's connection (page cache, schema, statements) grow by more than a
    // fraction of one trial's samples.
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Store::create(&tmp.path().join("run")).unwrap();
    s.write_run(&RunInfo {
        plan_name: "flat".into(),
        plan_file: "flat.toml".into(),
        plan_source: "name = \"flat\"".into(),
        seed: 1,
        started_unix: 1_800_000_000.0,
        planned_trials: 120,
    })
    .unwrap();
    s.write_point(0, "n=1", r#"{"n":1}"#, 120, Some("fixed")).unwrap();
    let start = live();
    let (mut at20, mut sql20) = (0, 0);
    for id in 0..120 {
        s.write_trial(&trial(id, 0, id, r#"{"n":1}"#)).unwrap();
        if id + 1 == 20 {
            (at20, sql20) = (live() - start, s.connection_memory());
        }
    }
    let (at120, sql120) = (live() - start, s.connection_memory());
    eprintln!("store: {at20} B live and {sql20} B in SQLite after 20 trials, {at120} B and {sql120} B after 120");
    let one_trial = TRIAL_TABLE as isize;
    assert!(
        at120 - at20 <= one_trial / 16,
        "the store's structures grew by {} B from trial 20 to trial 120",
        at120 - at20
    );
    assert!(
        sql120 <= sql20 + TRIAL_TABLE as u64 / 4,
        "SQLite's connection grew from {sql20} B to {sql120} B from trial 20 to trial 120"
    );
}
