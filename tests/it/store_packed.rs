//! The packed store (schema 3): older stores open, report the same and upgrade; every sampled value
//! comes back bit for bit through the export; the per-phase summaries stored at the end of a trial
//! equal those computed from its raw samples; a sampled value costs a few bytes.

use crate::common::files_under;
use assert_cmd::Command;
use perflab::analysis::table::SampleTable;
use perflab::store::{summarize, RunInfo, Store, TaggedSample, TrialRecord, SCHEMA_VERSION};
use std::path::Path;

/// A store of schema version 2 (one `sample` row per value), from its SQL dump.
fn v2_store(dir: &Path) {
    let sql = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/store/v2.sql")).expect("fixture");
    rusqlite::Connection::open(dir.join(perflab::store::DB_FILE))
        .and_then(|c| c.execute_batch(&sql))
        .expect("load the version 2 store");
}

/// A sample as bits: (phase, t_s, unix_s, (name, value) sorted by name).
type Bits = (String, u64, u64, Vec<(String, u64)>);

fn bits(samples: &[TaggedSample]) -> Vec<Bits> {
    let mut out: Vec<_> = samples
        .iter()
        .map(|s| {
            let mut v: Vec<(String, u64)> = s.values.iter().map(|(k, v)| (k.clone(), v.to_bits())).collect();
            v.sort();
            (s.phase.clone(), s.t_s.to_bits(), s.unix_s.to_bits(), v)
        })
        .collect();
    out.sort_by_key(|s| s.1);
    out
}

#[test]
fn a_version_2_store_opens_reports_the_same_and_upgrades() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    v2_store(&run);

    let store = Store::open(&run).expect("a version 2 store opens");
    assert_eq!(store.schema_version(), 2);
    let trials = store.trials().unwrap();
    assert_eq!(trials.len(), 4);
    let before: Vec<_> = trials.iter().map(|t| bits(&store.samples(t.id).unwrap())).collect();
    assert_eq!(before[0].len(), 9, "9 samples in trial 0");
    assert_eq!(before[0][0].3.len(), 7, "7 metrics per sample");
    let summaries_before: Vec<_> = trials.iter().map(|t| store.phase_summaries(t.id, &t.phases).unwrap()).collect();
    assert_eq!(store.sampled_values().unwrap(), 251);
    drop(store);
    perflab::report::write(&[&run], &tmp.path().join("old"), perflab::report::Formats::all(), false).expect("report v2");

    let o = Command::cargo_bin("perflab")
        .unwrap()
        .args(["store", "upgrade"])
        .arg(&run)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains(&format!("store upgraded from schema version 2 to {SCHEMA_VERSION}")),
        "{said}"
    );

    let store = Store::open(&run).unwrap();
    assert_eq!(store.schema_version(), SCHEMA_VERSION);
    let tables: i64 = rusqlite::Connection::open(run.join(perflab::store::DB_FILE))
        .unwrap()
        .query_row("SELECT count(*) FROM sqlite_master WHERE name = 'sample'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(tables, 0, "the row-per-value table is gone");
    assert_eq!(store.sampled_values().unwrap(), 251, "every value kept");
    for (i, t) in store.trials().unwrap().iter().enumerate() {
        assert_eq!(
            bits(&store.samples(t.id).unwrap()),
            before[i],
            "trial {} samples, bit for bit",
            t.id
        );
        assert_eq!(
            store.phase_summaries(t.id, &t.phases).unwrap(),
            summaries_before[i],
            "trial {}",
            t.id
        );
    }
    // The gap (one cpu_iowait_pct value of trial 1 removed) stays a gap.
    let n_iowait = |s: &[TaggedSample]| s.iter().filter(|s| s.values.iter().any(|(k, _)| k == "cpu_iowait_pct")).count();
    assert_eq!(n_iowait(&store.samples(1).unwrap()), 8);
    drop(store);
    perflab::report::write(&[&run], &tmp.path().join("new"), perflab::report::Formats::all(), false).expect("report v3");
    assert_eq!(
        files_under(&tmp.path().join("old")),
        files_under(&tmp.path().join("new")),
        "the same report before and after the upgrade"
    );

    // Twice is nothing to do; a directory that is no run is a usage error.
    let o = Command::cargo_bin("perflab")
        .unwrap()
        .args(["store", "upgrade"])
        .arg(&run)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("already at store schema version {SCHEMA_VERSION}")));
    let o = Command::cargo_bin("perflab")
        .unwrap()
        .args(["store", "upgrade"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is not a perflab run directory") && err.lines().count() == 1, "{err}");
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `n` samples every 10 ms through baseline, load and recovery, `metrics` values each, shaped like
/// the monitor's: percentages with noise, slowly moving sizes, counters, rates that are mostly zero;
/// with `odd`, also awkward values (−0, subnormals, huge, many digits) and gaps.
fn samples(n: usize, metrics: usize, seed: u64, odd: bool) -> Vec<TaggedSample> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|i| {
            let t_s = 0.01 * i as f64 + 0.000_3 * rng.unit();
            let phase = if i < n / 4 {
                "baseline"
            } else if i < 3 * n / 4 {
                "load"
            } else {
                "recovery"
            };
            let load = phase == "load";
            let values = (0..metrics)
                .filter(|m| !(odd && (i + m) % 13 == 0))
                .map(|m| {
                    let v = match m % 5 {
                        0 => (if load { 90.0 } else { 5.0 }) + (rng.unit() * 1000.0).round() / 100.0,
                        1 => 2048.0 + (i / 50) as f64,
                        2 => (i as f64 * 3.0).floor(),
                        3 => {
                            if rng.unit() < 0.9 {
                                0.0
                            } else {
                                (rng.unit() * 100.0).round()
                            }
                        }
                        _ => 1.0 + m as f64,
                    };
                    let v = if odd && m == 0 {
                        [-0.0, 5e-324, 1.7976931348623157e308, 0.1 + 0.2, -1e-300, rng.unit()][i % 6]
                    } else {
                        v
                    };
                    (format!("m{m:03}_pct"), v)
                })
                .collect();
            TaggedSample {
                phase: phase.into(),
                t_s,
                unix_s: 1_800_000_000.0 + t_s,
                values,
            }
        })
        .collect()
}

fn record(id: usize, samples: Vec<TaggedSample>) -> TrialRecord {
    crate::common::exec_trial(id, 0, id as u32 + 1, "{}", 1_800_000_000.0, samples)
}

fn new_store(dir: &Path) -> Store {
    let mut s = Store::create(dir).unwrap();
    s.write_run(&RunInfo {
        plan_name: "packed".into(),
        plan_file: "packed.toml".into(),
        plan_source: "name = \"packed\"".into(),
        seed: 1,
        started_unix: 1_800_000_000.0,
        planned_trials: 3,
    })
    .unwrap();
    s.write_point(0, "", "{}", 3, None).unwrap();
    s
}

#[test]
fn every_sampled_value_reads_back_bit_for_bit_through_the_export() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = new_store(tmp.path());
    let written: Vec<Vec<TaggedSample>> = (0..3).map(|i| samples(201, 20, 7 + i, true)).collect();
    for (i, w) in written.iter().enumerate() {
        s.write_trial(&record(i, w.clone())).unwrap();
    }
    // Another host's samples of trial 0 are kept apart (their own dictionary entries and clock).
    let remote = samples(30, 4, 99, false);
    s.write_host_samples(0, "db1", &remote, &record(0, vec![]).phases).unwrap();
    assert_eq!(bits(&s.samples_on(0, "db1").unwrap()), bits(&remote));
    assert_eq!(bits(&s.samples(0).unwrap()), bits(&written[0]));
    let out = tmp.path().join("csv");
    perflab::store::export::to_csv(&s, &out).unwrap();
    let mut r = csv::Reader::from_path(out.join("sample.csv")).unwrap();
    assert_eq!(
        r.headers().unwrap().iter().collect::<Vec<_>>(),
        ["trial_id", "host", "phase", "t_s", "unix_s", "name", "value"]
    );
    let mut back: Vec<Vec<Bits>> = vec![Vec::new(); 3];
    for rec in r.records() {
        let rec = rec.unwrap();
        let f = |i: usize| rec[i].parse::<f64>().unwrap().to_bits();
        if &rec[1] == "db1" {
            continue;
        }
        let trial = &mut back[rec[0].parse::<usize>().unwrap()];
        if trial.last().is_none_or(|l| l.1 != f(3)) {
            trial.push((rec[2].to_string(), f(3), f(4), Vec::new()));
        }
        trial.last_mut().unwrap().3.push((rec[5].to_string(), f(6)));
    }
    for (i, w) in written.iter().enumerate() {
        let mut b = back[i].clone();
        b.iter_mut().for_each(|s| s.3.sort());
        assert_eq!(b, bits(w), "trial {i}: every value, timestamp and phase");
    }
}

/// A table as bits: per column (name, value bits per sample), sorted by name; then (phase, t_s bits).
type TableBits = (Vec<(String, Vec<u64>)>, Vec<(String, u64)>);

fn table_bits(t: &SampleTable) -> TableBits {
    let mut cols: Vec<(String, Vec<u64>)> = t
        .names()
        .iter()
        .map(|n| {
            let c = t.col(n).unwrap();
            // Absent values are NaN in a table: compare them as one bit pattern.
            let v = t
                .column(c)
                .iter()
                .map(|v| if v.is_nan() { u64::MAX } else { v.to_bits() })
                .collect();
            (n.clone(), v)
        })
        .collect();
    cols.sort();
    let clock = (0..t.len()).map(|r| (t.phase(r).to_string(), t.t_s(r).to_bits())).collect();
    (cols, clock)
}

#[test]
fn the_columns_the_rules_read_hold_exactly_the_samples() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = new_store(tmp.path());
    for i in 0..3 {
        s.write_trial(&record(i, samples(201, 12, 300 + i as u64, i != 0))).unwrap();
    }
    s.write_host_samples(0, "db1", &samples(30, 4, 99, true), &record(0, vec![]).phases)
        .unwrap();
    for (id, host) in [(0, "local"), (1, "local"), (2, "local"), (0, "db1"), (1, "db1")] {
        let rows = s.samples_on(id, host).unwrap();
        let refs: Vec<_> = rows.iter().map(|r| (r.t_s, r.phase.as_str(), r.values.as_slice())).collect();
        let table = s.sample_table_on(id, host).unwrap();
        assert_eq!(table.len(), rows.len(), "trial {id} on {host}");
        assert_eq!(
            table_bits(&table),
            table_bits(&SampleTable::from_refs(&refs)),
            "trial {id} on {host}"
        );
    }
    // Pooled trials: the rows of each, one after the other.
    let mut pooled = s.sample_table_on(1, "local").unwrap();
    pooled.append(&s.sample_table_on(2, "local").unwrap());
    let rows: Vec<TaggedSample> = [1, 2].iter().flat_map(|&id| s.samples(id).unwrap()).collect();
    let refs: Vec<_> = rows.iter().map(|r| (r.t_s, r.phase.as_str(), r.values.as_slice())).collect();
    assert_eq!(table_bits(&pooled), table_bits(&SampleTable::from_refs(&refs)));
    assert_eq!(pooled.len(), 402);
}

#[test]
fn stored_phase_summaries_equal_those_of_the_raw_samples() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = new_store(tmp.path());
    for i in 0..3 {
        s.write_trial(&record(i, samples(201, 15, 100 + i as u64, i == 1))).unwrap();
    }
    drop(s);
    let s = Store::open(tmp.path()).unwrap();
    for t in s.trials().unwrap() {
        let stored = s.phase_summaries(t.id, &t.phases).unwrap();
        assert_eq!(stored.len(), 15);
        assert_eq!(stored, summarize(&s.samples(t.id).unwrap(), &t.phases), "trial {}", t.id);
        // Known answers: metric 1 is 2048 + i/50, so its peak under load (samples 50..150) is 2050.
        let m1 = stored.iter().find(|p| p.metric == "m001_pct").unwrap();
        assert_eq!(m1.peak, Some(2050.0));
        if t.id != 1 {
            assert_eq!((m1.n_baseline, m1.n_load, m1.n_recovery), (50, 100, 51));
        }
    }
}

#[test]
fn a_sampled_value_costs_at_most_8_bytes_on_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = new_store(tmp.path());
    for i in 0..20 {
        s.write_trial(&record(i, samples(201, 100, 1000 + i as u64, false))).unwrap();
    }
    s.checkpoint().unwrap();
    let values = s.sampled_values().unwrap();
    assert_eq!(values, 20 * 201 * 100);
    drop(s);
    let bytes = std::fs::metadata(tmp.path().join(perflab::store::DB_FILE)).unwrap().len();
    let per_value = bytes as f64 / values as f64;
    eprintln!("{bytes} bytes for {values} sampled values: {per_value:.2} bytes per value");
    assert!(per_value <= 8.0, "{per_value:.2} bytes per sampled value");
}

#[test]
fn the_dry_run_warns_of_sampling_faster_than_can_be_drawn_with_the_projected_size() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = |interval: &str| {
        crate::common::write_plan(
            tmp.path(),
            &format!(
                "name = \"fast\"\nrepetitions = 2\n[workload]\ntype = \"exec\"\ncommand = \"true\"\n\
                 [phases]\nbaseline = \"5s\"\nwarmup = \"0s\"\nload = \"20s\"\nrecovery = \"5s\"\ninterval = \"{interval}\"\n"
            ),
        )
    };
    let dry = |p: &Path| {
        let o = Command::cargo_bin("perflab")
            .unwrap()
            .args(["run", "--dry-run"])
            .arg(p)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let out = dry(&plan("10ms"));
    let w = out
        .lines()
        .find(|l| l.starts_with("warning: sampling every 10ms"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        w.contains("3001 samples per trial") && w.contains("2 trial(s) will store about"),
        "{w}"
    );
    assert!(!dry(&plan("1s")).contains("warning: sampling"));
}
