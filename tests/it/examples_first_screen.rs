//! The first screen of every seed example's report. Each example under examples/ (000_* to 004_*)
//! and `perflab demo` runs for real with short phases (a copy of its plan: phases of a second or
//! two, one repetition, two values of each swept parameter, the tools' own durations and files
//! shortened, free ports), and its first screen is read: the first 60 lines of report.md, and the
//! text of report.html visible at 1400×900 in headless Chromium (a copy of the page with a script
//! that lists the visible headings, paragraphs and table rows; content, not pixels). Each seed's
//! table shape must be there; the part of report.md before the appendix fits in 300 lines, for
//! every example and for the report of all the 000 examples together.
//!
//! These are acceptance checks of work in progress, ignored by a plain `cargo test`: the shapes
//! some of them look for are not all on the first screen yet. Checks marked `pending` name what they
//! wait for: they are evaluated and printed, not asserted, unless `PERFLAB_FIRST_SCREEN_PENDING=1`.
//! Run them with `cargo test --release --test it examples_first_screen:: -- --ignored --nocapture`
//! (`PERFLAB_FIRST_SCREEN_SHOW=1` prints every first screen too).

use crate::common::skip_unless_required;
use crate::db_servers::Server;
use crate::first_screen::{
    by_columns, cells, check, example, has_header, has_row, has_text, judge, pending, phase_table, plan_text, read, run, Check, Example,
    BODY_LINES,
};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The system table with rows for CPU, memory and each of `more` (a metric prefix), and, pending
/// the key figures of each tool, the tool's own figures named by `key`.
fn system_checks(more: &'static [&'static str], key: &'static [&'static str]) -> Vec<Check> {
    let mut c = vec![phase_table(more)];
    if !key.is_empty() {
        c.push(pending(
            "the tool's own key figures at every point",
            "the key figures of each tool",
            move |l| key.iter().all(|k| has_text(l, k)),
        ));
    }
    c
}

/// Is there a table row with a cell `a` and a Δ % in another?
fn with_delta(l: &[String], a: &str) -> bool {
    l.iter()
        .filter_map(|x| cells(x))
        .any(|c| c.contains(&a) && c.iter().any(|x| x.contains(" %")))
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
#[ignore = "acceptance checks of the seed examples' first screens, not all holding yet: run with --ignored"]
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
                let mut c = system_checks(&["net_lo_"], &["failed_requests"]);
                c.push(check("latency idle vs under load from the probes", |l| {
                    ["ping (icmp)", "curl (http)"]
                        .iter()
                        .all(|p| has_row(l, p, &["idle"]) && has_row(l, p, &["under load"]))
                }));
                c.push(pending(
                    "the web server before/after with Δ %",
                    "an example with a web-server variant (none of examples/000_* has one)",
                    |l| cell(l, "before") && with_delta(l, "after"),
                ));
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
            system_checks(&[], &["verify"]),
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
            system_checks(&["net_lo_"], &["lost"]),
        ),
        (
            Example {
                file: "000_fio.toml",
                ports: &[],
                keep: |l| ends(l, &["=read", "=randwrite"]),
            },
            system_checks(&["disk_"], &["read_iops", "write_iops"]),
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
            system_checks(&[], &["cpu_bogo_ops_per_s"]),
        ),
        (
            Example {
                file: "000_stress_ng_vm.toml",
                ports: &[],
                keep: all,
            },
            system_checks(&[], &["vm_bogo_ops_per_s"]),
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
#[ignore = "acceptance checks of the seed examples' first screens, not all holding yet: run with --ignored"]
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
        judge(
            &r,
            &[
                check("the variants before and after, the after row with its Δ %", |l| {
                    l.iter().filter_map(|x| cells(x)).any(|c| c.contains(&"before"))
                        && l.iter()
                            .filter_map(|x| cells(x))
                            .any(|c| c.contains(&"after") && c.iter().any(|x| x.contains(" %")))
                }),
                phase_table(&[]),
                pending(
                    "before and after paired by every other parameter, with Δ % in every cell",
                    "the pairing of variants that set a parameter",
                    |l| with_delta(l, "after") && !has_text(l, "Compared: each variant against variant"),
                ),
                pending(
                    "the stress types (cpu, vm, io) side by side",
                    "an example sweeping the stressors with the headline per point",
                    |l| has_text(l, "cpu_bogo_ops") && has_text(l, "vm_bogo_ops"),
                ),
                pending(
                    "latency idle vs under load",
                    "probes in the 001 examples (none declares one)",
                    |l| cell(l, "idle") && cell(l, "under load"),
                ),
            ],
        );
    }
}

/// 002: throughput and time by cores and requests, with the speedup.
#[test]
#[ignore = "acceptance checks of the seed examples' first screens, not all holding yet: run with --ignored"]
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
            check("requests_per_s at every cpus and requests", |l| {
                by_columns(l, "requests_per_s", &["requests = 10", "requests = 100"])
                    && has_row(l, "requests_per_s", &["cpus=1"])
                    && has_row(l, "requests_per_s", &["cpus=2"])
            }),
            check("the speedup", |l| {
                has_header(l, &["speedup"]) && l.iter().filter_map(|x| cells(x)).filter(|c| c.len() > 5).count() >= 4
            }),
            pending(
                "the time per run (total_time_s) by cores and requests",
                "the key figures of each tool",
                |l| has_text(l, "total_time_s"),
            ),
            pending("the speedup along the cores", "the choice of x", |l| has_text(l, "against cpus")),
        ],
    );
}

/// 003: the pool against thread-per-connection per concurrency and size, with Δ % and a verdict.
#[test]
#[ignore = "acceptance checks of the seed examples' first screens, not all holding yet: run with --ignored"]
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
            check("each concurrency in a column", |l| {
                has_header(l, &["concurrency = 2", "concurrency = 20"])
            }),
            check(
                "thread-per-connection against the pool, for both sizes, with Δ % and a verdict",
                |l| {
                    ["size=37", "size=10485760"].iter().all(|size| {
                        l.iter().filter_map(|x| cells(x)).any(|c| {
                            c.contains(&"thread-per-connection")
                                && c.contains(size)
                                && c.iter()
                                    .any(|x| x.contains(" %, ") && (x.contains("samples") || x.contains("ed)") || x.contains("difference")))
                        })
                    })
                },
            ),
            pending("an observation sentence per compared variant", "the observations", |l| {
                has_text(l, "Observation")
            }),
        ],
    );
}

/// 004: throughput and latency by threads, per scenario, with the errors by threads.
#[test]
#[ignore = "acceptance checks of the seed examples' first screens, not all holding yet: run with --ignored"]
fn the_oltp_examples_show_throughput_and_latency_by_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let threads = |l: &str| ends(l, &["threads=1", "threads=8"]);
    let e = Example {
        file: "004_oltp_threads.toml",
        ports: &[],
        keep: threads,
    };
    let by_threads = |metric: &'static str| move |l: &[String]| by_columns(l, metric, &["threads = 1", "threads = 8"]);
    if let Some(r) = example(&e, tmp.path()) {
        judge(
            &r,
            &[
                check("transactions_per_s by threads", by_threads("transactions_per_s")),
                check("p99 latency by threads", by_threads("p99")),
                check("each scenario", |l| has_text(l, "read_only") && has_text(l, "read_write")),
            ],
        );
    }
    // sysbench against a scratch PostgreSQL, its tables loaded by sysbench itself.
    if !on_path("sysbench") {
        skip_unless_required("004: sysbench is not installed");
        return;
    }
    let Some(server) = Server::postgres() else {
        skip_unless_required("004: PostgreSQL is not installed");
        return;
    };
    let port = server.port.to_string();
    let common = [
        "--db-driver=pgsql",
        "--pgsql-host=127.0.0.1",
        &format!("--pgsql-port={port}"),
        "--pgsql-user=postgres",
        "--pgsql-db=sbtest",
        "--tables=2",
        "--table-size=1000",
    ];
    let prepare = Command::new("sysbench")
        .arg("oltp_read_write")
        .args(common)
        .arg("prepare")
        .output()
        .unwrap();
    assert!(
        prepare.status.success(),
        "sysbench prepare: {}",
        String::from_utf8_lossy(&prepare.stderr)
    );
    let e = Example {
        file: "004_sysbench_oltp_postgres.toml",
        ports: &[],
        keep: threads,
    };
    let work = tmp.path().join("pg");
    std::fs::create_dir_all(&work).unwrap();
    // The plan's own target (a scratch server of its own) gives way to the test's.
    let text = plan_text(&e, &work)
        .replace("15432", &port)
        .replace("--pgsql-db=postgres", "--pgsql-db=sbtest")
        .replace("--tables=4", "--tables=2")
        .replace("--table-size=10000", "--table-size=1000");
    let text = without_section(&text, "[target]");
    let dir = run(&e, &text, &work).expect("the sysbench run");
    let r = read(e.file, &dir, &work);
    judge(
        &r,
        &[
            check("transactions_per_s by threads", by_threads("transactions_per_s")),
            check("each test", |l| has_text(l, "oltp_read_only") && has_text(l, "oltp_read_write")),
            pending(
                "the latency (sysbench's percentile) by threads",
                "the key figures of each tool",
                |l| has_text(l, "latency_p95_ms"),
            ),
            pending("the errors by threads", "the findings ranked errors first", |l| {
                has_text(l, "errors appear from threads")
            }),
        ],
    );
    drop(server);
}

/// `perflab demo`: each model at each concurrency and size against the pool, with Δ % and a
/// verdict.
#[test]
#[ignore = "acceptance checks of the seed examples' first screens, not all holding yet: run with --ignored"]
fn the_demo_shows_each_model_against_the_pool() {
    let tmp = tempfile::tempdir().unwrap();
    let e = Example {
        file: "demo",
        ports: &[],
        keep: |l| ends(l, &["concurrency=2", "concurrency=20"]),
    };
    let Some(r) = example(&e, tmp.path()) else { return };
    judge(
        &r,
        &[
            check("requests_per_s, p50 and p99 by concurrency", |l| {
                ["requests_per_s", "p50", "p99"]
                    .iter()
                    .all(|m| by_columns(l, m, &["concurrency = 2", "concurrency = 20"]))
            }),
            check("thread-per-connection against the pool with Δ %", |l| {
                l.iter()
                    .filter_map(|x| cells(x))
                    .any(|c| c.contains(&"thread-per-connection") && c.iter().any(|x| x.contains(" %, ")))
            }),
        ],
    );
}

/// The plan text without the section `header` (up to the next section).
fn without_section(text: &str, header: &str) -> String {
    let mut out = Vec::new();
    let mut skipping = false;
    for line in text.lines() {
        if line.trim() == header {
            skipping = true;
            continue;
        }
        if skipping && line.starts_with('[') {
            skipping = false;
        }
        if !skipping {
            out.push(line);
        }
    }
    out.join("\n")
}

fn on_path(prog: &str) -> bool {
    perflab::workload::exec::preflight::find_program(prog, None, None).is_some()
}
