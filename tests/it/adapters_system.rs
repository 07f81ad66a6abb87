//! stress-ng, memtester, fio and iperf3 adapters against real outputs captured from the tools
//! (tests/fixtures/tools, see its README): exact figures, and each tool's error case.

use crate::adapters_common;

use adapters_common::*;
use perflab::workload::exec::adapters::{by_name, ToolOutput};
use perflab::workload::exec::process::Exit;
use perflab::workload::Better;

#[test]
fn stress_ng_yaml_per_stressor() {
    let r = parse("stress-ng", "stress-ng", "cpu");
    assert_eq!(v(&r, "cpu_bogo_ops"), 4540.0);
    assert_eq!(v(&r, "cpu_bogo_ops_per_s"), 2267.282323);
    assert_eq!(v(&r, "cpu_bogo_ops_per_cpu_s"), 2037.403863);
    assert_eq!(v(&r, "cpu_wall_time_s"), 2.002397);
    assert_eq!(v(&r, "cpu_user_time_s"), 2.224318);
    assert_eq!(v(&r, "cpu_system_time_s"), 0.004008);
    assert_eq!(v(&r, "cpu_cpu_usage_pct"), 55.641455);
    assert!(close(v(&r, "cpu_max_rss_mb"), 3196.0 / 1024.0));
    assert_eq!(r.metric("cpu_max_rss_mb").map(|m| m.unit.as_str()), Some("MiB"));
    assert_eq!(r.metric("cpu_bogo_ops_per_s").map(|m| m.better), Some(Better::Higher));
    let r = parse("stress-ng", "stress-ng", "vm_stream");
    assert_eq!(v(&r, "vm_bogo_ops"), 37888.0);
    assert_eq!(v(&r, "stream_bogo_ops"), 1.0);
    assert_eq!(v(&r, "stream_wall_time_s"), 12.840403);
    assert!(
        r.metric("stream_memory_read_rate_mib_per_s").is_none(),
        "no rate when the loop ran < 4.5 s"
    );
}

#[test]
fn stress_ng_metrics_text_when_there_is_no_yaml() {
    let mut out = fixture("stress-ng", "cpu");
    out.args.retain(|a| a != "--yaml" && !a.ends_with(".yaml"));
    let r = by_name("stress-ng").expect("adapter").parse(&out).expect("text parses");
    assert_eq!(v(&r, "cpu_bogo_ops"), 4540.0);
    assert_eq!(v(&r, "cpu_wall_time_s"), 2.00);
    assert_eq!(v(&r, "cpu_user_time_s"), 2.22);
    assert_eq!(v(&r, "cpu_system_time_s"), 0.00);
    assert_eq!(v(&r, "cpu_bogo_ops_per_s"), 2267.28);
    assert_eq!(v(&r, "cpu_bogo_ops_per_cpu_s"), 2037.40);
    let mut out = fixture("stress-ng", "vm_stream");
    out.args.retain(|a| a != "--yaml" && !a.ends_with(".yaml"));
    let r = by_name("stress-ng").expect("adapter").parse(&out).expect("text parses");
    assert_eq!(v(&r, "vm_bogo_ops_per_s"), 18887.92);
    assert_eq!(v(&r, "stream_bogo_ops_per_cpu_s"), 0.09);
}

#[test]
fn stress_ng_yaml_with_stream_rates_is_mib() {
    let yaml = "---\nmetrics:\n    - stressor: stream\n      bogo-ops: 10\n      memory-read-rate-mb-per-sec: 7822.900000\n      memory-rate-mflop-per-sec: 783.5\n...\n";
    let mut m = perflab::workload::exec::adapters::text::Metrics::default();
    perflab::workload::exec::adapters::stress_ng::parse_yaml(yaml, &mut m).expect("parses");
    let r = m.result;
    assert_eq!(v(&r, "stream_memory_read_rate_mib_per_s"), 7822.9);
    assert_eq!(
        r.metric("stream_memory_read_rate_mib_per_s").map(|m| m.unit.as_str()),
        Some("MiB/s")
    );
    assert_eq!(v(&r, "stream_memory_rate_mflop_per_s"), 783.5);
    assert_eq!(r.metric("stream_memory_rate_mflop_per_s").map(|m| m.unit.as_str()), Some("MFLOP/s"));
}

#[test]
fn stress_ng_error() {
    let e = error("stress-ng", "stress-ng", "error");
    assert_eq!(e, "exit status 1 (error): stress-ng: unrecognized option '--no-such-option'");
}

#[test]
fn stress_ng_without_metrics_is_a_failure_not_a_zero() {
    let mut out = fixture("stress-ng", "cpu");
    out.args.retain(|a| a != "--yaml" && !a.ends_with(".yaml"));
    out.stderr = out.stderr.lines().filter(|l| !l.contains("metrc")).collect::<Vec<_>>().join("\n");
    let e = by_name("stress-ng").expect("adapter").parse(&out).expect_err("nothing to read");
    assert!(e.reason.starts_with("no stress-ng metrics"), "{}", e.reason);
    assert!(e.raw.iter().any(|l| l.contains("successful run completed")), "unparsed lines kept");
}

#[test]
fn memtester_every_test_passes() {
    let r = parse("memtester", "memtester", "ok");
    assert_eq!(r.failure, None);
    assert_eq!(v(&r, "memtest_tests_passed"), 18.0);
    assert_eq!(v(&r, "memtest_tests_failed"), 0.0);
    assert_eq!(v(&r, "memtest_loops"), 1.0);
    for t in [
        "stuck_address",
        "random_value",
        "compare_xor",
        "bit_flip",
        "walking_zeroes",
        "8_bit_writes",
        "16_bit_writes",
    ] {
        assert_eq!(v(&r, &format!("memtest_{t}_pass")), 1.0, "{t}");
    }
}

#[test]
fn memtester_a_failed_test_fails_the_trial() {
    // The captured output with one test failed as memtester reports it: no `ok` and no newline
    // (the next test follows on the same line), the failure on stderr.
    let mut out = fixture("memtester", "ok");
    out.stdout = out.stdout.replacen("Compare MUL         : ok\n", "Compare MUL         : ", 1);
    out.stderr = "FAILURE: 0x4e0c3a1b != 0x4e0c3a1f at offset 0x00001230.\n".into();
    out.exit = Exit::Code(4);
    let r = by_name("memtester").expect("adapter").parse(&out).expect("parses");
    assert_eq!(v(&r, "memtest_compare_mul_pass"), 0.0);
    assert_eq!(v(&r, "memtest_tests_failed"), 1.0);
    assert_eq!(v(&r, "memtest_tests_passed"), 17.0);
    assert_eq!(
        r.failure.as_deref(),
        Some("memtester: failed tests: Compare MUL (FAILURE: 0x4e0c3a1b != 0x4e0c3a1f at offset 0x00001230.) (exit status 4)")
    );
}

#[test]
fn memtester_errors() {
    assert_eq!(
        error("memtester", "memtester", "error"),
        "could not start (exit status 1): can not use /nonexistent/mem as device: No such file or directory"
    );
    assert_eq!(
        error("memtester", "memtester", "usage"),
        "could not start (exit status 1): Usage: memtester [-p physaddrbase [-d device]] <mem>[B|K|M|G] [loops]"
    );
}

#[test]
fn fio_single_job_json_file() {
    let r = parse("fio", "fio", "randread");
    assert_eq!(v(&r, "randread_read_iops"), 17977.511244);
    assert_eq!(v(&r, "read_iops"), 17977.511244);
    assert!(close(v(&r, "randread_read_bw_mibps"), 73635886.0 / 1048576.0));
    assert!(close(v(&r, "read_clat_mean_us"), 55.251102716));
    assert_eq!(v(&r, "read_clat_p50_us"), 48.384);
    assert_eq!(v(&r, "read_clat_p99_us"), 98.816);
    assert_eq!(v(&r, "read_clat_p99_9_us"), 168.96);
    assert_eq!(v(&r, "randread_read_lat_p99_us"), 98.816);
    assert_eq!(v(&r, "randread_usr_cpu_pct"), 1.25);
    assert_eq!(v(&r, "randread_sys_cpu_pct"), 46.75);
    assert!(r.metric("write_iops").is_none(), "no write figures for a read-only job");
}

#[test]
fn fio_two_jobs_are_summed_and_kept_apart() {
    let r = parse("fio", "fio", "rw_2jobs");
    assert_eq!(v(&r, "mixed_0_read_iops"), 13427.786107);
    assert_eq!(v(&r, "mixed_1_read_iops"), 13417.291354);
    assert!(close(v(&r, "read_iops"), 13427.786107 + 13417.291354));
    assert!(close(v(&r, "write_iops"), 5749.125437 + 5770.114943));
    assert!(close(v(&r, "write_bw_mibps"), (23548417.0 + 23634390.0) / 1048576.0));
    assert!(r.metric("read_clat_p99_us").is_none(), "percentiles of two jobs are not merged");
    assert!(r.metric("mixed_0_read_clat_p99_us").is_some());
}

#[test]
fn fio_json_after_notes_on_stdout() {
    let json = read(&format!("{DIR}/fio/randread.json"));
    let out = ToolOutput::new(
        &["fio", "--output-format=json"],
        format!("note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n{json}"),
        "",
        Exit::Code(0),
    );
    let r = by_name("fio").expect("adapter").parse(&out).expect("parses");
    assert_eq!(v(&r, "read_iops"), 17977.511244);
}

#[test]
fn fio_status_interval_reports_give_the_last_one() {
    // `--status-interval=1` prints a report per interval, then the final one.
    let json = read(&format!("{DIR}/fio/randread.json"));
    let interim = json.replace("\"iops\" : 17977.511244,", "\"iops\" : 1000.000000,");
    let out = ToolOutput::new(
        &["fio", "--output-format=json", "--status-interval=1"],
        format!("{interim}{json}"),
        "",
        Exit::Code(0),
    );
    let r = by_name("fio").expect("adapter").parse(&out).expect("parses");
    assert_eq!(v(&r, "read_iops"), 17977.511244);
    // The final report cut short is not replaced by the interim one.
    let cut = format!("{interim}{}", &json[..json.len() / 2]);
    let out = ToolOutput::new(&["fio", "--output-format=json"], cut, "", Exit::Code(0));
    let e = by_name("fio").expect("adapter").parse(&out).expect_err("cut short");
    assert!(e.reason.starts_with("fio: the JSON report is cut short"), "{}", e.reason);
}

#[test]
fn fio_error() {
    assert_eq!(
        error("fio", "fio", "error"),
        "job bad error 20: file:filesetup.c:455, func=fstat, error=Not a directory; fio: pid=0, err=20/file:filesetup.c:455, func=fstat, error=Not a directory"
    );
    let out = ToolOutput::new(&["fio", "--name=x"], "x: (g=0): rw=read\nRun status group 0", "", Exit::Code(0));
    let e = by_name("fio").expect("adapter").parse(&out).expect_err("not JSON");
    assert!(e.reason.starts_with("no JSON report found"), "{}", e.reason);
    assert!(e.raw.iter().any(|l| l == "Run status group 0"));
}

#[test]
fn iperf3_tcp() {
    let r = parse("iperf3", "iperf3", "tcp");
    assert!(close(v(&r, "sent_mbitps"), 21207014856.19545 / 1e6));
    assert!(close(v(&r, "received_mbitps"), 21206706941.257057 / 1e6));
    assert_eq!(v(&r, "retransmits"), 22.0);
    assert_eq!(v(&r, "rtt_mean_us"), 78.0);
    assert_eq!(v(&r, "rtt_max_us"), 86.0);
    assert_eq!(v(&r, "client_cpu_pct"), 99.1083030761523);
    assert_eq!(v(&r, "server_cpu_pct"), 41.68708239420987);
    assert_eq!(r.series.len(), 2);
    assert!(close(r.series[0].value, 20979841502.461994 / 1e6));
    assert_eq!(r.series[0].t_s, 1.000603);
}

#[test]
fn iperf3_udp() {
    let r = parse("iperf3", "iperf3", "udp");
    assert!(close(v(&r, "sent_mbitps"), 200005771.70852873 / 1e6));
    assert!(close(v(&r, "received_mbitps"), 199999572.03487915 / 1e6));
    assert_eq!(v(&r, "jitter_ms"), 0.008020064688528814);
    assert_eq!(v(&r, "lost_packets"), 0.0);
    assert_eq!(v(&r, "lost_pct"), 0.0);
    assert_eq!(v(&r, "packets"), 1526.0);
    assert!(r.metric("retransmits").is_none());
}

#[test]
fn iperf3_error_with_exit_status_0() {
    assert_eq!(
        error("iperf3", "iperf3", "error"),
        "unable to connect to server: Connection refused"
    );
}
