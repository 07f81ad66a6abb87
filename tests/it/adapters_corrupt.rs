//! Real tool outputs (tests/fixtures/tools) corrupted one field at a time, or cut short: the
//! adapter fails the trial with one line naming the tool, the field and the text, keeps the lines
//! it could not use, and never stores a wrong figure.

use crate::adapters_common;

use adapters_common::*;
use perflab::util::Cancel;
use perflab::workload::exec::adapters::{by_name, ParseError, ToolOutput};
use perflab::workload::exec::process::Exit;
use perflab::workload::exec::{ExecConfig, ExecWorkload};
use perflab::workload::{RunSpec, Workload};
use std::time::Duration;

/// Replace exactly one occurrence of `from` in `text` (so that a test cannot silently miss).
fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "`{from}` occurs once in the fixture");
    text.replacen(from, to, 1)
}

fn fails(adapter: &str, out: &ToolOutput) -> ParseError {
    match by_name(adapter).expect("adapter").parse(out) {
        Ok(r) => panic!("{adapter} stored {:?} from corrupted output", r.metrics),
        Err(e) => {
            assert!(!e.reason.contains('\n'), "one line: {}", e.reason);
            assert!(!e.raw.is_empty(), "the lines are kept");
            e
        }
    }
}

/// The fio report on stdout (as with `--output-format=json` and no `--output`).
fn fio_stdout(json: String) -> ToolOutput {
    ToolOutput::new(&["fio", "--output-format=json"], json, "", Exit::Code(0))
}

#[test]
fn fio_iops_that_is_not_a_number_is_not_a_zero() {
    let json = read(&format!("{DIR}/fio/randread.json"));
    let bad = replace_once(&json, "\"iops\" : 17977.511244,", "\"iops\" : \"n/a\",");
    let e = fails("fio", &fio_stdout(bad));
    assert_eq!(e.reason, "fio: `job randread read.iops` is not a number: \"n/a\"");
    assert!(e.raw.iter().any(|l| l.contains("\"n/a\"")), "the report is kept");
    // The same report intact parses (the corruption is what fails).
    let r = by_name("fio").expect("adapter").parse(&fio_stdout(json)).expect("parses");
    assert_eq!(v(&r, "read_iops"), 17977.511244);
}

#[test]
fn sysbench_count_that_is_not_a_number_does_not_take_the_rate() {
    let mut out = fixture("sysbench", "oltp_read_write");
    out.stdout = replace_once(&out.stdout, "289    (124.49 per sec.)", "nan (653.28 per sec.)");
    let e = fails("sysbench", &out);
    assert_eq!(e.reason, "sysbench: `transactions` is not a number: `nan (653.28 per sec.)`");

    let mut out = fixture("sysbench", "oltp_read_write");
    out.stdout = replace_once(&out.stdout, "10     (4.31 per sec.)", "nan (0.20 per sec.)");
    let e = fails("sysbench", &out);
    assert_eq!(e.reason, "sysbench: `ignored errors` is not a number: `nan (0.20 per sec.)`");
}

#[test]
fn pgbench_failed_transactions_that_are_not_a_number() {
    let mut out = fixture("pgbench", "tpcb");
    out.stdout = replace_once(&out.stdout, "failed transactions: 0 (0.000%)", "failed transactions: nan (2.500%)");
    let e = fails("pgbench", &out);
    assert_eq!(e.reason, "pgbench: `number of failed transactions` is not a number: `nan (2.500%)`");
}

#[test]
fn text_figures_with_units_or_neighbours_are_read_by_label() {
    // A count with a rate beside it, a time with its unit, a latency line, an interval line.
    for (tool, name, from, to, field, shown) in [
        ("sysbench", "cpu", "2.0003s", "n/a", "total time", "n/a"),
        ("sysbench", "cpu", "10141", "-", "total number of events", "-"),
        ("sysbench", "cpu", "0.42", "nan", "latency 95th percentile", "nan"),
        (
            "sysbench",
            "memory",
            "2048 (25451.96",
            "x (25451.96",
            "Total operations",
            "x (25451.96 per second)",
        ),
        ("pgbench", "tpcb", "= 3.155 ms", "= NaN ms", "latency average =", "NaN ms"),
        ("pgbench", "tpcb", "tps = 633.222047", "tps = inf", "tps", "inf"),
        ("ab", "ok", "22770.48", "nan", "Requests per second", "nan [#/sec] (mean)"),
        ("ab", "ok", "requests:      2000", "requests:      n/a", "Complete requests", "n/a"),
        ("wrk", "latency", "128146.45", "-nan", "Requests/sec", "-nan"),
        ("wrk", "latency", "20.78MB", "-nanMB", "Transfer/sec", "-nanMB"),
        (
            "wrk",
            "latency",
            "92.10%",
            "-nan%",
            "Latency",
            "Latency 231.81us 622.24us 10.70ms -nan%",
        ),
        ("wrk", "latency", "2.76ms", "nanms", "Latency Distribution", "99% nanms"),
    ] {
        let mut out = fixture(tool, name);
        let text = if out.stdout.contains(from) {
            &mut out.stdout
        } else {
            &mut out.stderr
        };
        *text = replace_once(text, from, to);
        let e = fails(tool, &out);
        let expect = format!("{tool}: `{field}` is not a number: `");
        assert!(e.reason.starts_with(&expect), "{tool}/{name} `{to}`: {}", e.reason);
        assert!(e.reason.ends_with(&format!("`{shown}`")), "the bad text is named: {}", e.reason);
    }
}

#[test]
fn sysbench_interval_lines_with_a_bad_figure_fail() {
    let line = "[ 1s ] thds: 4 tps: nan qps: 2400.50 (r/w/o: 1680.00/480.00/240.50) lat (ms,95%): 11.24 err/s: 0.00 reconn/s: 0.00\n";
    let full = format!("{line}{}", read(&format!("{DIR}/sysbench/oltp_read_write.stdout")));
    let out = ToolOutput::new(&["sysbench", "oltp_read_write", "run"], full, "", Exit::Code(0));
    let e = fails("sysbench", &out);
    assert_eq!(e.reason, "sysbench: `tps: at 1s` is not a number: `nan`");
}

#[test]
fn memtester_without_done_is_cut_short() {
    let mut out = fixture("memtester", "ok");
    let cut = out.stdout.rfind("Done.").expect("Done.");
    out.stdout.truncate(cut);
    let e = fails("memtester", &out);
    assert_eq!(e.reason, "memtester: the output is cut short: no closing `Done.`");
    assert!(
        e.raw.iter().any(|l| l.trim() == "16-bit Writes       : ok"),
        "lines kept, spinner removed: {:?}",
        e.raw
    );
    // Cut in the middle of a test line as well.
    let mut out = fixture("memtester", "ok");
    let cut = out.stdout.find("Compare MUL").expect("a test line");
    out.stdout.truncate(cut + 16);
    assert_eq!(
        fails("memtester", &out).reason,
        "memtester: the output is cut short: no closing `Done.`"
    );
}

#[test]
fn memtester_failure_keeps_its_lines() {
    let mut out = fixture("memtester", "ok");
    out.stdout = out.stdout.replacen("Compare MUL         : ok\n", "Compare MUL         : ", 1);
    out.stderr = "FAILURE: 0x4e0c3a1b != 0x4e0c3a1f at offset 0x00001230.\n".into();
    out.exit = Exit::Code(4);
    let r = by_name("memtester").expect("adapter").parse(&out).expect("parses");
    assert!(r.failure.is_some());
    assert!(r.raw.iter().any(|l| l.trim() == "Compare XOR         : ok"), "{:?}", r.raw);
    assert!(r.raw.iter().any(|l| l.starts_with("FAILURE: 0x4e0c3a1b")), "{:?}", r.raw);
}

#[test]
fn sysbench_without_its_latency_block_is_cut_short() {
    let mut out = fixture("sysbench", "cpu");
    let cut = out.stdout.find("Latency (ms):").expect("latency block");
    out.stdout.truncate(cut);
    let e = fails("sysbench", &out);
    assert_eq!(e.reason, "sysbench: the output is cut short: no `Latency (ms)` block");
    assert!(e.raw.iter().any(|l| l.contains("total number of events:")), "{:?}", e.raw);
    // Cut inside the block: no `sum:` line.
    let mut out = fixture("sysbench", "cpu");
    let cut = out.stdout.find("95th percentile").expect("percentile");
    out.stdout.truncate(cut);
    let e = fails("sysbench", &out);
    assert_eq!(e.reason, "sysbench: the output is cut short: no `sum:` in the latency block");
    // Cut inside a number.
    let mut out = fixture("sysbench", "cpu");
    let cut = out.stdout.find("0.42").expect("p95");
    out.stdout.truncate(cut + 2);
    assert!(fails("sysbench", &out).reason.starts_with("sysbench: "));
}

#[test]
fn stress_ng_yaml_cut_mid_record_fails_and_keeps_the_yaml() {
    let dir = tempfile::tempdir().expect("tmp");
    let yaml = read(&format!("{DIR}/stress-ng/vm_stream.yaml"));
    let cut = yaml.find("      wall-clock-time: 12.840403").expect("stream record");
    std::fs::write(dir.path().join("out.yaml"), &yaml[..cut]).expect("write");
    let mut out = fixture("stress-ng", "vm_stream");
    out.args = ["stress-ng", "--vm", "1", "--yaml", "out.yaml"].map(String::from).to_vec();
    out.cwd = Some(dir.path().to_path_buf());
    let e = fails("stress-ng", &out);
    assert_eq!(e.reason, "stress-ng: the YAML report is cut short (no closing `...`)");
    assert!(
        e.raw.iter().any(|l| l.trim() == "- stressor: stream"),
        "the YAML is kept: {:?}",
        e.raw
    );
    // A value that is not a number in a whole file.
    let bad = replace_once(&yaml, "bogo-ops: 37888", "bogo-ops: nan");
    std::fs::write(dir.path().join("out.yaml"), bad).expect("write");
    let e = fails("stress-ng", &out);
    assert_eq!(e.reason, "stress-ng: `vm` `bogo-ops` is not a number: `nan`");
}

#[test]
fn stress_ng_text_table_cut_or_corrupted_fails() {
    let mut out = fixture("stress-ng", "cpu");
    out.args.retain(|a| a != "--yaml" && !a.ends_with(".yaml"));
    let text = out.stderr.clone();
    out.stderr = text[..text.find("2037.40").expect("row") + 4].to_string();
    assert_eq!(
        fails("stress-ng", &out).reason,
        "stress-ng: the output is cut short: no `successful run completed` line after the metrics"
    );
    out.stderr = replace_once(&text, "4540", "nan");
    assert!(fails("stress-ng", &out)
        .reason
        .starts_with("stress-ng: the metrics of `cpu` are not six numbers"));
}

#[test]
fn json_reports_cut_short_fail() {
    let json = read(&format!("{DIR}/fio/randread.json"));
    for cut in [json.len() / 3, json.len() / 2, json.len() - 3] {
        let e = fails("fio", &fio_stdout(json[..cut].to_string()));
        assert!(
            e.reason
                .starts_with("fio: the JSON report is cut short or malformed: EOF while parsing"),
            "{}",
            e.reason
        );
    }
    let tcp = fixture("iperf3", "tcp");
    for cut in [tcp.stdout.len() / 3, tcp.stdout.len() - 3] {
        let mut out = tcp.clone();
        out.stdout.truncate(cut);
        let e = fails("iperf3", &out);
        assert!(
            e.reason
                .starts_with("iperf3: the JSON report is cut short or malformed: EOF while parsing"),
            "{}",
            e.reason
        );
    }
    let mut out = tcp.clone();
    out.stdout = replace_once(&out.stdout, "\n\t\t\t\"retransmits\":\t22", "\n\t\t\t\"retransmits\":\t\"22\"");
    assert_eq!(
        fails("iperf3", &out).reason,
        "iperf3: `end.sum_sent.retransmits` is not a number: \"22\""
    );
}

#[test]
fn ab_and_wrk_without_their_summary_lines_fail() {
    let ok = fixture("ab", "ok");
    for (cut_at, reason) in [
        (
            "Time per request:       0.044",
            "ab: the output is cut short: no `[ms] (mean, across all concurrent requests)` line",
        ),
        ("Transfer rate:", "ab: the output is cut short: no `Transfer rate` line"),
        (
            "Connection Times (ms)",
            "ab: the output is cut short: no `Connection Times (ms)` table",
        ),
        ("Waiting:", "ab: the output is cut short: no `Waiting` line"),
        (
            "Percentage of the requests",
            "ab: the output is cut short: no `Percentage of the requests served` table",
        ),
        (" 100%", "ab: the output is cut short: the percentile table ends before `100%`"),
    ] {
        let mut out = ok.clone();
        out.stdout.truncate(out.stdout.find(cut_at).unwrap_or_else(|| panic!("{cut_at}")));
        assert_eq!(fails("ab", &out).reason, reason);
    }
    // Without `Requests per second:` ab's output is not a report at all.
    let mut out = ok.clone();
    out.stdout.truncate(out.stdout.find("Requests per second:").expect("rps"));
    assert_eq!(
        fails("ab", &out).reason,
        "ab: the output is cut short: no `Requests per second` line"
    );

    let ok = fixture("wrk", "latency");
    let mut out = ok.clone();
    out.stdout.truncate(out.stdout.find("Transfer/sec:").expect("transfer"));
    assert_eq!(fails("wrk", &out).reason, "wrk: the output is cut short: no `Transfer/sec` line");
    let mut out = ok.clone();
    out.stdout = out.stdout.lines().filter(|l| !l.contains("99%")).collect::<Vec<_>>().join("\n");
    assert_eq!(
        fails("wrk", &out).reason,
        "wrk: the output is cut short: the `Latency Distribution` has fewer than 4 lines"
    );
    let mut out = ok.clone();
    out.stdout = out.stdout.lines().filter(|l| !l.contains("Req/Sec")).collect::<Vec<_>>().join("\n");
    assert_eq!(
        fails("wrk", &out).reason,
        "wrk: the output is cut short: no `Req/Sec` line under `Thread Stats`"
    );
    let mut out = ok.clone();
    out.stdout = replace_once(&out.stdout, "20.78MB", "20.7");
    assert_eq!(fails("wrk", &out).reason, "wrk: `Transfer/sec` is not a number: `20.7`");
}

/// Through the workload: the trial fails with the adapter's one line (the tool named once) and the
/// output kept for the record.
#[test]
fn the_trial_fails_with_the_line_and_keeps_the_output() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut text = read(&format!("{DIR}/sysbench/oltp_read_write.stdout"));
    text = replace_once(&text, "289    (124.49 per sec.)", "nan (653.28 per sec.)");
    std::fs::write(dir.path().join("out.txt"), text).expect("write");
    let mut cfg = ExecConfig::argv(["cat", "out.txt"]);
    cfg.adapter = Some("sysbench".into());
    cfg.cwd = Some(dir.path().to_path_buf());
    let mut w = ExecWorkload::new(cfg);
    let spec = RunSpec {
        warmup: Duration::ZERO,
        load: Duration::from_secs(1),
    };
    let r = w.run(spec, &Cancel::new(), &mut || {}).expect("runs");
    assert_eq!(
        r.failure.as_deref(),
        Some("sysbench: `transactions` is not a number: `nan (653.28 per sec.)`")
    );
    assert!(r.metric("transactions").is_none(), "no figure from a corrupted report");
    assert!(r.raw.iter().any(|l| l.contains("nan (653.28 per sec.)")), "{:?}", r.raw);
}
