//! The first screen of every seed example's report. Each example under examples/ (000_* to 004_*)
//! runs for real with short phases (a copy of its plan: phases of a second or
//! two, one repetition, two values of each swept parameter, the tools' own durations and files
//! shortened, free ports), and its first screen is read: the first 60 lines of report.md, and the
//! text of report.html visible at 1400×900 in headless Chromium (a copy of the page with a script
//! that lists the visible headings, paragraphs and table rows; content, not pixels). Each seed's
//! table shape must be there; the part of report.md before the appendix fits in 300 lines, for
//! every example and for the report of all the 000 examples together.
//!
//! Run them alone with `cargo test --release --test it examples_first_screen:: -- --nocapture`
//! (`PERFLAB_FIRST_SCREEN_SHOW=1` prints every first screen too).

use crate::common::skip_unless_required;
use crate::first_screen::{
    by_columns, cells, check, example, has_columns, has_header, has_row, has_text, judge, phase_table, plan_text, read, row, run, Check,
    Example, BODY_LINES,
};
use std::path::{Path, PathBuf};

/// The system table with rows for CPU, memory and each of `more` (a metric prefix), and the
/// tool's own key figures named by `key` (their labels in the answer table; an error count 0 at
/// every point named in the sentence that says so instead).
fn system_checks(more: &'static [&'static str], key: &'static [&'static str]) -> Vec<Check> {
    let mut c = vec![phase_table(more)];
    if !key.is_empty() {
        c.push(check("the tool's own key figures at every point", move |l| {
            key.iter().all(|k| {
                l.iter().filter_map(|x| cells(x)).any(|c| c.iter().any(|h| h.starts_with(k)))
                    || l.iter().any(|x| {
                        x.split("0 at every point, so not in the table:")
                            .nth(1)
                            .is_some_and(|t| t.contains(k))
                    })
            })
        }));
    }
    c
}

/// Is there a table row with a cell `a` and a Δ % in another?
fn with_delta(l: &[String], a: &str) -> bool {
    l.iter()
        .filter_map(|x| cells(x))
        .any(|c| c.contains(&a) && c.iter().any(|x| x.contains(" %")))
}

/// Is a cell a compared figure with its Δ % and verdict ("9954 (-61.9 %, untested)")?
fn verdict_cell(x: &str) -> bool {
    x.contains(" %, ") && x.ends_with(')')
}

/// Is there a table row with a cell exactly `a`?
fn cell(l: &[String], a: &str) -> bool {
    l.iter().filter_map(|x| cells(x)).any(|c| c.contains(&a))
}

fn all(_: &str) -> bool {
    true
}

fn ends(label: &str, values: &[&str]) -> bool {
    values.iter().any(|v| label.ends_with(v))
}

/// Every 000 example: the system table per resource (and the probes' idle vs under load for the
/// web server), then all of them in one report, whose body fits too.
#[test]
fn the_000_examples_show_the_system_per_resource_and_the_probes_first() {
    let tmp = tempfile::tempdir().unwrap();
    let examples: Vec<(Example, Vec<Check>)> = vec![
        (
            Example {
                file: "000_ab_concurrency.toml",
                ports: &["18000"],
                keep: |l| ends(l, &["=10", "=100"]),
            },
            {
                let mut c = system_checks(&["net_lo_"], &["failed requests"]);
                c.push(check("latency idle vs under load from the probes", |l| {
                    ["ping (icmp)", "curl (http)"].iter().all(|p| has_row(l, p, &[" → "]))
                }));
                c.push(check("the web server before/after with Δ %", |l| {
                    cell(l, "before") && with_delta(l, "after")
                }));
                c
            },
        ),
        (
            Example {
                file: "000_builtin_cpu.toml",
                ports: &[],
                keep: all,
            },
            system_checks(&[], &[]),
        ),
        (
            Example {
                file: "000_builtin_disk.toml",
                ports: &[],
                keep: |l| l.contains("rw=read ") || l.contains("rw=randwrite "),
            },
            system_checks(&["disk_"], &[]),
        ),
        (
            Example {
                file: "000_builtin_memtester.toml",
                ports: &[],
                keep: all,
            },
            system_checks(&[], &["patterns passed"]),
        ),
        (
            Example {
                file: "000_builtin_net.toml",
                ports: &["15203"],
                keep: all,
            },
            system_checks(&["net_lo_"], &[]),
        ),
        (
            Example {
                file: "000_builtin_net_udp.toml",
                ports: &["15204"],
                keep: |l| ends(l, &["=100M", "=1G"]),
            },
            system_checks(&["net_lo_"], &["jitter", "lost"]),
        ),
        (
            Example {
                file: "000_fio.toml",
                ports: &[],
                keep: |l| ends(l, &["=read", "=randwrite"]),
            },
            system_checks(&["disk_"], &["read IOPS", "write IOPS", "read p99 lat", "write p99 lat"]),
        ),
        (
            Example {
                file: "000_iperf3.toml",
                ports: &["15201"],
                keep: |l| ends(l, &["-P 1", "-u -b 100M"]),
            },
            system_checks(&["net_lo_"], &["jitter", "lost", "retransmits"]),
        ),
        (
            Example {
                file: "000_stress_ng_cpu.toml",
                ports: &[],
                keep: all,
            },
            system_checks(&[], &["cpu bogo-ops/s"]),
        ),
        (
            Example {
                file: "000_stress_ng_vm.toml",
                ports: &[],
                keep: all,
            },
            system_checks(&[], &["vm bogo-ops/s"]),
        ),
    ];
    let mut runs = Vec::new();
    for (e, checks) in &examples {
        if e.file.contains("stress_ng") && !on_path("stress-ng")
            || e.file.contains("fio") && !on_path("fio")
            || e.file.contains("iperf3") && !on_path("iperf3")
            || e.file.contains("_ab_") && !on_path("ab")
        {
            skip_unless_required(&format!("{}: its tool is not installed", e.file));
            continue;
        }
        if let Some(r) = example(e, tmp.path()) {
            judge(&r, checks);
            runs.push(r.dir);
        }
    }
    // All of them in one report (`perflab report RUN...`): its body fits as well.
    let out = tmp.path().join("all");
    let dirs: Vec<&Path> = runs.iter().map(PathBuf::as_path).collect();
    perflab::report::write(&dirs, &out, perflab::report::Formats::all(), false).expect("the combined report");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let body: Vec<String> = md.lines().take_while(|l| *l != "## Appendix").map(str::to_string).collect();
    assert!(
        has_header(&body, &["experiment", "point", "Baseline", "Under load", "Peak", "Recovery"]),
        "one system table across the experiments:\n{}",
        body.join("\n")
    );
    assert!(
        body.len() <= BODY_LINES,
        "the report of all the 000 examples has {} lines before its appendix (at most {BODY_LINES})",
        body.len()
    );
    eprintln!("all the 000 examples in one report: {} lines before the appendix", body.len());
}

/// The 001 examples: each variant (vm.swappiness, the network buffers) before and after, with Δ %.
#[test]
fn the_001_examples_show_before_and_after() {
    let tmp = tempfile::tempdir().unwrap();
    let examples = [
        Example {
            file: "001_swappiness.toml",
            ports: &[],
            keep: all,
        },
        Example {
            file: "001_builtin_memory.toml",
            ports: &[],
            keep: all,
        },
        Example {
            file: "001_builtin_net_buffers.toml",
            ports: &["15205"],
            keep: all,
        },
    ];
    for e in &examples {
        if e.file.contains("swappiness") && !on_path("stress-ng") {
            skip_unless_required(&format!("{}: stress-ng is not installed", e.file));
            continue;
        }
        let Some(r) = example(e, tmp.path()) else { continue };
        let mut checks = vec![
            check(
                "the variants before and after, paired: a Δ % in every figure of every after row",
                |l| {
                    // The figures' rows; a probe's row (idle → under load per point) pairs phases.
                    let after: Vec<Vec<&str>> = l
                        .iter()
                        .filter_map(|x| cells(x))
                        .filter(|c| c.contains(&"after") && !c.iter().any(|x| x.contains(" → ")))
                        .collect();
                    l.iter().filter_map(|x| cells(x)).any(|c| c.contains(&"before"))
                        && !after.is_empty()
                        && after.iter().all(|c| {
                            let figures = &c[c.iter().position(|x| *x == "after").unwrap() + 1..];
                            // Paired: a Δ %, or "(0 before)" where the before was 0 (no
                            // ratio: retransmits that appeared only after, on a busy machine).
                            figures.iter().any(|x| x.contains(" %") || x.ends_with(" (0 before)"))
                                && figures
                                    .iter()
                                    .filter(|x| x.starts_with(|ch: char| ch.is_ascii_digit()))
                                    .all(|x| x.contains(" %") || x.ends_with(" (0 before)") || *x == "0")
                        })
                },
            ),
            phase_table(&[]),
        ];
        if e.file.contains("swappiness") {
            checks.push(check("the stress types (cpu, io, vm) side by side", |l| {
                has_columns(l, "stressor", &["cpu", "io", "vm"])
            }));
        }
        if e.file.contains("net_buffers") {
            checks.push(check("the latency idle vs under load", |l| {
                has_row(l, "ping (icmp)", &["idle"]) && has_row(l, "ping (icmp)", &["under load"]) || has_row(l, "ping (icmp)", &[" → "])
            }));
        }
        judge(&r, &checks);
    }
}

/// 002: throughput and time by cores and requests, with the speedup.
#[test]
fn the_cores_example_shows_throughput_and_speedup_by_cores_and_requests() {
    let tmp = tempfile::tempdir().unwrap();
    let e = Example {
        file: "002_cores.toml",
        ports: &["18002"],
        keep: |l| (l.contains("cpus=1 ") || l.contains("cpus=2 ")) && ends(l, &["requests=10", "requests=100"]),
    };
    let Some(r) = example(&e, tmp.path()) else { return };
    judge(
        &r,
        &[
            check("requests/s at every cpus (a column each) and requests (a row each)", |l| {
                by_columns(l, "requests/s", "cpus", &["1", "2"])
                    && ["10", "100"]
                        .iter()
                        .all(|n| row(l, "requests/s").iter().any(|c| c.get(1) == Some(n)))
            }),
            check("the speedup", |l| {
                has_header(l, &["speedup"]) && l.iter().filter_map(|x| cells(x)).filter(|c| c.len() > 5).count() >= 4
            }),
            check("the time per run (total_time_s) by cores and requests", |l| {
                by_columns(l, "total_time_s", "cpus", &["1", "2"])
            }),
            check("the speedup along the cores", |l| has_text(l, "against cpus")),
        ],
    );
}

/// 003: the pool against thread-per-connection per concurrency and size, with Δ % and a verdict.
#[test]
fn the_pool_example_shows_each_model_against_the_pool_with_a_verdict() {
    if !on_path("ab") {
        skip_unless_required("003: ab is not installed (apache2-utils)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let e = Example {
        file: "003_pool_vs_threads.toml",
        ports: &["18003"],
        keep: |l| ends(l, &["concurrency=2", "concurrency=20"]),
    };
    let Some(r) = example(&e, tmp.path()) else { return };
    judge(
        &r,
        &[
            check("each concurrency in a column", |l| has_columns(l, "concurrency", &["2", "20"])),
            check(
                "thread-per-connection against the pool, for both sizes, with Δ % and a verdict",
                |l| {
                    ["37", "10485760"].iter().all(|size| {
                        l.iter()
                            .filter_map(|x| cells(x))
                            .any(|c| c.contains(&"thread-per-connection") && c.contains(size) && c.iter().any(|x| verdict_cell(x)))
                    })
                },
            ),
            check("an observation sentence per compared variant", |l| {
                has_text(l, "Observation: model = thread-per-connection against pool")
            }),
        ],
    );
}

/// 004: throughput and latency by threads, per scenario, with the errors by threads.
#[test]
fn the_oltp_examples_show_throughput_and_latency_by_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let threads = |l: &str| ends(l, &["threads=1", "threads=8"]);
    let e = Example {
        file: "004_oltp_threads.toml",
        ports: &[],
        keep: threads,
    };
    let by_threads = |label: &'static str| move |l: &[String]| by_columns(l, label, "threads", &["1", "8"]);
    if let Some(r) = example(&e, tmp.path()) {
        judge(
            &r,
            &[
                check("transactions/s by threads", by_threads("transactions/s")),
                check("p99 latency by threads", by_threads("p99 transaction time")),
                check("each scenario", |l| has_text(l, "read_only") && has_text(l, "read_write")),
            ],
        );
    }
    // sysbench against the plan's own scratch PostgreSQL (its target, started by the plan inside
    // each instance's limits, its tables loaded by sysbench itself), smaller tables.
    if !on_path("sysbench") {
        skip_unless_required("004: sysbench is not installed");
        return;
    }
    let installed = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().any(|v| v.path().join("bin/initdb").exists()))
        .unwrap_or(false);
    if !installed {
        skip_unless_required("004: PostgreSQL is not installed");
        return;
    }
    let e = Example {
        file: "004_sysbench_oltp_postgres.toml",
        ports: &["15432"],
        keep: threads,
    };
    let work = tmp.path().join("pg");
    std::fs::create_dir_all(&work).unwrap();
    let text = plan_text(&e, &work)
        .replace("\"4\", \"10000\"]", "\"2\", \"1000\"]")
        .replace("--tables=4", "--tables=2")
        .replace("--table-size=10000", "--table-size=1000");
    let Some(dir) = run(&e, &text, &work) else { return };
    let r = read(e.file, &dir, &work);
    judge(
        &r,
        &[
            check("transactions/s by threads", by_threads("transactions/s")),
            check("each test", |l| has_text(l, "oltp_read_only") && has_text(l, "oltp_read_write")),
            check("each instance: large against small with Δ % and a verdict", |l| {
                row(l, "transactions/s").iter().any(|c| c.get(1) == Some(&"small"))
                    && row(l, "transactions/s")
                        .iter()
                        .any(|c| c.get(1) == Some(&"large") && c.iter().any(|x| verdict_cell(x)))
            }),
            check("the latency (sysbench's percentile) by threads", |l| {
                by_columns(l, "p95 time per event", "threads", &["1", "8"])
            }),
            check("the errors by threads, and where they appear said", |l| {
                let errors = row(l, "ignored errors");
                let some = errors
                    .iter()
                    .any(|c| c[1..].iter().any(|x| x.parse::<f64>().is_ok_and(|v| v > 0.0)));
                let shown = by_columns(l, "ignored errors", "threads", &["1", "8"])
                    || has_text(l, "0 at every point, so not in the table: ignored errors");
                shown && (!some || has_text(l, "errors appear from threads"))
            }),
        ],
    );
}

/// `perflab demo`: each model at each concurrency and size against the pool, with Δ % and a
/// verdict. Judged on the real demo's run (the test in demo.rs runs `perflab demo` itself: one run of
/// the demo serves both).
pub fn the_demo_shows_each_model_against_the_pool(dir: &Path, tmp: &Path) {
    let r = read("demo", dir, tmp);
    judge(
        &r,
        &[
            check("requests/s, p50 and p99 by concurrency", |l| {
                ["requests/s", "p50 response time", "p99 response time"]
                    .iter()
                    .all(|m| by_columns(l, m, "concurrency", &["2", "20"]))
            }),
            check("thread-per-connection against the pool with Δ % and a verdict", |l| {
                l.iter()
                    .filter_map(|x| cells(x))
                    .any(|c| c.contains(&"thread-per-connection") && c.iter().any(|x| verdict_cell(x)))
            }),
        ],
    );
}

fn on_path(prog: &str) -> bool {
    perflab::workload::exec::preflight::find_program(prog, None, None).is_some()
}
