//! Every adapter against real outputs captured from the tools (tests/fixtures/tools, see its README):
//! exact figures as the tool printed them, and each tool's error case failing with its message.

use perflab::workload::exec::adapters::{by_name, ToolOutput};
use perflab::workload::exec::process::Exit;
use perflab::workload::{Better, WorkloadResult};

const DIR: &str = "tests/fixtures/tools";

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("fixture {path}: {e}"))
}

/// The captured run `tool/name`: its command words, stdout, stderr and exit status.
fn fixture(tool: &str, name: &str) -> ToolOutput {
    let base = format!("{DIR}/{tool}/{name}");
    let code: i32 = read(&format!("{base}.exit"))
        .trim()
        .parse()
        .expect("exit code");
    ToolOutput {
        args: read(&format!("{base}.cmd"))
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        cwd: None,
        stdout: read(&format!("{base}.stdout")),
        stderr: read(&format!("{base}.stderr")),
        exit: Exit::Code(code),
    }
}

fn parse(adapter: &str, tool: &str, name: &str) -> WorkloadResult {
    let a = by_name(adapter).expect("adapter");
    a.parse(&fixture(tool, name))
        .unwrap_or_else(|e| panic!("{tool}/{name}: {e} {:?}", e.raw))
}

fn error(adapter: &str, tool: &str, name: &str) -> String {
    let a = by_name(adapter).expect("adapter");
    let e = a
        .parse(&fixture(tool, name))
        .expect_err("the tool's error fails the trial");
    assert!(!e.raw.is_empty(), "the tool's lines are kept");
    e.reason
}

fn v(r: &WorkloadResult, name: &str) -> f64 {
    r.metric(name)
        .unwrap_or_else(|| panic!("metric {name} missing from {:?}", names(r)))
        .value
}

fn names(r: &WorkloadResult) -> Vec<&str> {
    r.metrics.iter().map(|m| m.name.as_str()).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

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
    assert_eq!(
        r.metric("cpu_bogo_ops_per_s").map(|m| m.better),
        Some(Better::Higher)
    );
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
    let r = by_name("stress-ng")
        .expect("adapter")
        .parse(&out)
        .expect("text parses");
    assert_eq!(v(&r, "cpu_bogo_ops"), 4540.0);
    assert_eq!(v(&r, "cpu_wall_time_s"), 2.00);
    assert_eq!(v(&r, "cpu_user_time_s"), 2.22);
    assert_eq!(v(&r, "cpu_system_time_s"), 0.00);
    assert_eq!(v(&r, "cpu_bogo_ops_per_s"), 2267.28);
    assert_eq!(v(&r, "cpu_bogo_ops_per_cpu_s"), 2037.40);
    let mut out = fixture("stress-ng", "vm_stream");
    out.args.retain(|a| a != "--yaml" && !a.ends_with(".yaml"));
    let r = by_name("stress-ng")
        .expect("adapter")
        .parse(&out)
        .expect("text parses");
    assert_eq!(v(&r, "vm_bogo_ops_per_s"), 18887.92);
    assert_eq!(v(&r, "stream_bogo_ops_per_cpu_s"), 0.09);
}

#[test]
fn stress_ng_yaml_with_stream_rates_is_mib() {
    let yaml = "---\nmetrics:\n    - stressor: stream\n      bogo-ops: 10\n      memory-read-rate-mb-per-sec: 7822.900000\n      memory-rate-mflop-per-sec: 783.5\n...\n";
    let mut m = perflab::workload::exec::adapters::text::Metrics::default();
    perflab::workload::exec::adapters::stress_ng::parse_yaml(yaml, &mut m);
    let r = m.result;
    assert_eq!(v(&r, "stream_memory_read_rate_mib_per_s"), 7822.9);
    assert_eq!(
        r.metric("stream_memory_read_rate_mib_per_s")
            .map(|m| m.unit.as_str()),
        Some("MiB/s")
    );
    assert_eq!(v(&r, "stream_memory_rate_mflop_per_s"), 783.5);
}

#[test]
fn stress_ng_error() {
    let e = error("stress-ng", "stress-ng", "error");
    assert_eq!(
        e,
        "exit status 1 (error): stress-ng: unrecognized option '--no-such-option'"
    );
}

#[test]
fn stress_ng_without_metrics_is_a_failure_not_a_zero() {
    let mut out = fixture("stress-ng", "cpu");
    out.args.retain(|a| a != "--yaml" && !a.ends_with(".yaml"));
    out.stderr = out
        .stderr
        .lines()
        .filter(|l| !l.contains("metrc"))
        .collect::<Vec<_>>()
        .join("\n");
    let e = by_name("stress-ng")
        .expect("adapter")
        .parse(&out)
        .expect_err("nothing to read");
    assert!(e.reason.starts_with("no stress-ng metrics"), "{}", e.reason);
    assert!(
        e.raw.iter().any(|l| l.contains("successful run completed")),
        "unparsed lines kept"
    );
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
    // The captured output with one test's `ok` replaced by memtester's failure report.
    let mut out = fixture("memtester", "ok");
    out.stdout = out
        .stdout
        .replacen("Compare MUL         : ok", "Compare MUL         : ", 1);
    out.stderr = "FAILURE: 0x4e0c3a1b != 0x4e0c3a1f at offset 0x00001230.\n".into();
    out.exit = Exit::Code(4);
    let r = by_name("memtester")
        .expect("adapter")
        .parse(&out)
        .expect("parses");
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
    assert!(close(
        v(&r, "randread_read_bw_mibps"),
        73635886.0 / 1048576.0
    ));
    assert!(close(v(&r, "read_clat_mean_us"), 55.251102716));
    assert_eq!(v(&r, "read_clat_p50_us"), 48.384);
    assert_eq!(v(&r, "read_clat_p99_us"), 98.816);
    assert_eq!(v(&r, "read_clat_p99_9_us"), 168.96);
    assert_eq!(v(&r, "randread_read_lat_p99_us"), 98.816);
    assert_eq!(v(&r, "randread_usr_cpu_pct"), 1.25);
    assert_eq!(v(&r, "randread_sys_cpu_pct"), 46.75);
    assert!(
        r.metric("write_iops").is_none(),
        "no write figures for a read-only job"
    );
}

#[test]
fn fio_two_jobs_are_summed_and_kept_apart() {
    let r = parse("fio", "fio", "rw_2jobs");
    assert_eq!(v(&r, "mixed_0_read_iops"), 13427.786107);
    assert_eq!(v(&r, "mixed_1_read_iops"), 13417.291354);
    assert!(close(v(&r, "read_iops"), 13427.786107 + 13417.291354));
    assert!(close(v(&r, "write_iops"), 5749.125437 + 5770.114943));
    assert!(close(
        v(&r, "write_bw_mibps"),
        (23548417.0 + 23634390.0) / 1048576.0
    ));
    assert!(
        r.metric("read_clat_p99_us").is_none(),
        "percentiles of two jobs are not merged"
    );
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
    let r = by_name("fio")
        .expect("adapter")
        .parse(&out)
        .expect("parses");
    assert_eq!(v(&r, "read_iops"), 17977.511244);
}

#[test]
fn fio_error() {
    assert_eq!(
        error("fio", "fio", "error"),
        "job bad error 20: file:filesetup.c:455, func=fstat, error=Not a directory; fio: pid=0, err=20/file:filesetup.c:455, func=fstat, error=Not a directory"
    );
    let out = ToolOutput::new(
        &["fio", "--name=x"],
        "x: (g=0): rw=read\nRun status group 0",
        "",
        Exit::Code(0),
    );
    let e = by_name("fio")
        .expect("adapter")
        .parse(&out)
        .expect_err("not JSON");
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

#[test]
fn sysbench_cpu() {
    let r = parse("sysbench", "sysbench", "cpu");
    assert_eq!(v(&r, "events_per_s"), 5066.23);
    assert_eq!(v(&r, "events"), 10141.0);
    assert_eq!(v(&r, "total_time_s"), 2.0003);
    assert_eq!(v(&r, "latency_min_ms"), 0.38);
    assert_eq!(v(&r, "latency_avg_ms"), 0.39);
    assert_eq!(v(&r, "latency_max_ms"), 2.21);
    assert_eq!(v(&r, "latency_p95_ms"), 0.42);
}

#[test]
fn sysbench_memory_and_fileio() {
    let r = parse("sysbench", "sysbench", "memory");
    assert_eq!(v(&r, "operations_per_s"), 25451.96);
    assert_eq!(v(&r, "transfer_mibps"), 25451.96);
    assert_eq!(v(&r, "events_per_s"), 2048.0 / 0.0790);
    let r = parse("sysbench", "sysbench", "fileio");
    assert_eq!(v(&r, "reads_per_s"), 47494.11);
    assert_eq!(v(&r, "writes_per_s"), 31662.74);
    assert_eq!(v(&r, "fsyncs_per_s"), 3167.77);
    assert_eq!(v(&r, "read_mibps"), 742.10);
    assert_eq!(v(&r, "write_mibps"), 494.73);
    assert_eq!(v(&r, "latency_p95_ms"), 0.00);
}

#[test]
fn sysbench_oltp() {
    let r = parse("sysbench", "sysbench", "oltp_read_write");
    assert_eq!(v(&r, "transactions"), 289.0);
    assert_eq!(v(&r, "transactions_per_s"), 124.49);
    assert_eq!(v(&r, "queries"), 5957.0);
    assert_eq!(v(&r, "queries_per_s"), 2566.14);
    assert_eq!(v(&r, "queries_read"), 4186.0);
    assert_eq!(v(&r, "queries_write"), 1154.0);
    assert_eq!(v(&r, "queries_other"), 617.0);
    assert_eq!(v(&r, "ignored_errors"), 10.0);
    assert_eq!(v(&r, "ignored_errors_per_s"), 4.31);
    assert_eq!(v(&r, "reconnects"), 0.0);
    assert_eq!(v(&r, "latency_avg_ms"), 32.02);
    assert_eq!(v(&r, "latency_p95_ms"), 11.24);
    assert_eq!(r.errors, vec![("ignored_errors".to_string(), 10)]);
    let r = parse("sysbench", "sysbench", "oltp_read_only");
    assert!(
        v(&r, "transactions_per_s") > 0.0
            && v(&r, "queries_per_s") == 16.0 * v(&r, "transactions_per_s")
            || r.metric("queries_per_s").is_some()
    );
}

#[test]
fn sysbench_interval_lines_become_series() {
    let text = "[ 1s ] thds: 4 tps: 120.00 qps: 2400.50 (r/w/o: 1680.00/480.00/240.50) lat (ms,95%): 11.24 err/s: 0.00 reconn/s: 0.00\n\
                [ 2s ] thds: 4 tps: 130.00 qps: 2600.00 (r/w/o: 1820.00/520.00/260.00) lat (ms,95%): 10.50 err/s: 1.00 reconn/s: 0.00\n";
    let full = format!(
        "{text}{}",
        read(&format!("{DIR}/sysbench/oltp_read_write.stdout"))
    );
    let out = ToolOutput::new(
        &["sysbench", "oltp_read_write", "run"],
        full,
        "",
        Exit::Code(0),
    );
    let r = by_name("sysbench")
        .expect("adapter")
        .parse(&out)
        .expect("parses");
    let tps: Vec<(f64, f64)> = r
        .series
        .iter()
        .filter(|p| p.name == "tps")
        .map(|p| (p.t_s, p.value))
        .collect();
    assert_eq!(tps, vec![(1.0, 120.0), (2.0, 130.0)]);
    let p95: Vec<f64> = r
        .series
        .iter()
        .filter(|p| p.name == "latency_p95_ms")
        .map(|p| p.value)
        .collect();
    assert_eq!(p95, vec![11.24, 10.5]);
}

#[test]
fn sysbench_fatal() {
    assert_eq!(
        error("sysbench", "sysbench", "error"),
        "FATAL: Connection to database failed: connection to server at \"127.0.0.1\", port 15298 failed: Connection refused; \
         FATAL: `thread_init' function failed: /usr/share/sysbench/oltp_common.lua:349: connection creation failed; \
         FATAL: Thread initialization failed!"
    );
}

#[test]
fn pgbench_tpcb_with_progress() {
    let r = parse("pgbench", "pgbench", "tpcb");
    assert_eq!(r.failure, None);
    assert_eq!(v(&r, "transactions_per_s"), 633.222047);
    assert_eq!(v(&r, "transactions"), 1263.0);
    assert_eq!(v(&r, "failed_transactions"), 0.0);
    assert_eq!(v(&r, "failed_transactions_pct"), 0.0);
    assert_eq!(v(&r, "latency_avg_ms"), 3.155);
    assert_eq!(v(&r, "latency_stddev_ms"), 2.883);
    assert_eq!(v(&r, "initial_connection_time_ms"), 9.272);
    // -P 2 with -T 2: the only progress report coincides with the end and is not printed.
    assert!(r.series.is_empty());
    let mut out = fixture("pgbench", "tpcb");
    out.stderr
        .push_str("progress: 1.0 s, 1494.4 tps, lat 5.213 ms stddev 2.549, 0 failed\n");
    let r = by_name("pgbench")
        .expect("adapter")
        .parse(&out)
        .expect("parses");
    let s: Vec<(f64, &str, f64)> = r
        .series
        .iter()
        .map(|p| (p.t_s, p.name.as_str(), p.value))
        .collect();
    assert_eq!(
        s,
        vec![(1.0, "tps", 1494.4), (1.0, "latency_avg_ms", 5.213)]
    );
}

#[test]
fn pgbench_without_progress_reports_the_derived_average_as_such() {
    let r = parse("pgbench", "pgbench", "select_only");
    assert_eq!(v(&r, "transactions_per_s"), 28292.311468);
    assert_eq!(v(&r, "transactions"), 56251.0);
    assert_eq!(v(&r, "latency_avg_derived_ms"), 0.071);
    assert!(
        r.metric("latency_avg_ms").is_none(),
        "not measured without -P/-R/-L"
    );
}

#[test]
fn pgbench_older_versions_report_both_tps() {
    let text = "number of transactions actually processed: 1000/1000\nlatency average = 1.5 ms\n\
                tps = 650.5 (including connections establishing)\ntps = 660.25 (excluding connections establishing)\n";
    let out = ToolOutput::new(&["pgbench"], text, "", Exit::Code(0));
    let r = by_name("pgbench")
        .expect("adapter")
        .parse(&out)
        .expect("parses");
    assert_eq!(v(&r, "transactions_per_s"), 660.25);
    assert_eq!(v(&r, "transactions_incl_connect_per_s"), 650.5);
    assert_eq!(v(&r, "transactions"), 1000.0);
}

#[test]
fn pgbench_error() {
    assert_eq!(
        error("pgbench", "pgbench", "error"),
        "pgbench: error: connection to server at \"127.0.0.1\", port 15433 failed: FATAL:  database \"no_such_db\" does not exist; \
         pgbench: error: could not create connection for setup"
    );
}

#[test]
fn ab_summary_connection_times_and_percentiles() {
    let r = parse("ab", "ab", "ok");
    assert_eq!(v(&r, "requests_per_s"), 22770.48);
    assert_eq!(v(&r, "time_per_request_ms"), 0.176);
    assert_eq!(v(&r, "time_per_request_all_ms"), 0.044);
    assert_eq!(v(&r, "transfer_kib_per_s"), 3780.26);
    assert_eq!(v(&r, "time_taken_s"), 0.088);
    assert_eq!(v(&r, "complete_requests"), 2000.0);
    assert_eq!(v(&r, "failed_requests"), 0.0);
    assert_eq!(v(&r, "non_2xx_responses"), 0.0);
    assert_eq!(v(&r, "total_transferred_bytes"), 340000.0);
    assert_eq!(v(&r, "html_transferred_bytes"), 74000.0);
    assert_eq!(v(&r, "concurrency"), 4.0);
    assert_eq!(v(&r, "processing_sd_ms"), 0.1);
    assert_eq!(v(&r, "total_max_ms"), 1.0);
    assert_eq!(v(&r, "latency_p50_ms"), 0.0);
    assert_eq!(v(&r, "latency_p99_ms"), 1.0);
    assert_eq!(v(&r, "latency_p100_ms"), 1.0);
    assert!(r.errors.is_empty());
}

#[test]
fn ab_failed_requests_by_kind() {
    let r = parse("ab", "ab", "non2xx");
    assert_eq!(v(&r, "failed_requests"), 412.0);
    assert_eq!(v(&r, "non_2xx_responses"), 88.0);
    assert_eq!(
        r.errors,
        vec![("length".to_string(), 412), ("non_2xx".to_string(), 88)]
    );
    let r = parse("ab", "ab", "keepalive");
    assert!(v(&r, "keep_alive_requests") > 0.0);
}

#[test]
fn ab_error() {
    assert_eq!(
        error("ab", "ab", "error"),
        "apr_socket_recv: Connection refused (111) (exit status 111)"
    );
}

#[test]
fn wrk_with_latency_distribution() {
    let r = parse("wrk", "wrk", "latency");
    assert_eq!(v(&r, "requests_per_s"), 128146.45);
    assert!(close(v(&r, "transfer_mibps"), 20.78));
    assert_eq!(v(&r, "requests"), 269060.0);
    assert!(close(v(&r, "duration_s"), 2.10));
    assert!(close(v(&r, "read_bytes"), 43.62 * 1048576.0));
    assert!(close(v(&r, "latency_avg_ms"), 0.23181));
    assert!(close(v(&r, "latency_stdev_ms"), 0.62224));
    assert!(close(v(&r, "latency_max_ms"), 10.70));
    assert_eq!(v(&r, "latency_within_stdev_pct"), 92.10);
    assert!(close(v(&r, "thread_req_per_s_avg"), 64470.0));
    assert!(close(v(&r, "latency_p50_ms"), 0.030));
    assert!(close(v(&r, "latency_p75_ms"), 0.107));
    assert!(close(v(&r, "latency_p90_ms"), 0.659));
    assert!(close(v(&r, "latency_p99_ms"), 2.76));
    assert_eq!(v(&r, "socket_errors"), 0.0);
    assert_eq!(v(&r, "non_2xx_3xx_responses"), 0.0);
    assert!(
        r.histograms.is_empty(),
        "percentiles alone cannot make a histogram"
    );
}

#[test]
fn wrk_without_latency_and_with_errors() {
    let r = parse("wrk", "wrk", "plain");
    assert_eq!(v(&r, "requests_per_s"), 64123.31);
    assert!(r.metric("latency_p99_ms").is_none());
    let r = parse("wrk", "wrk", "non2xx");
    assert_eq!(v(&r, "non_2xx_3xx_responses"), 16811.0);
    assert_eq!(r.errors, vec![("non_2xx_3xx".to_string(), 16811)]);
    let text = "Running 1s test @ http://127.0.0.1:1/\n  1 threads and 2 connections\n  Thread Stats   Avg      Stdev     Max   +/- Stdev\n    Latency     1.00ms    0.00us   1.00ms  100.00%\n    Req/Sec     0.00      0.00     0.00      0.00%\n  10 requests in 1.00s, 1.00KB read\n  Socket errors: connect 0, read 12, write 0, timeout 3\nRequests/sec:     10.00\nTransfer/sec:      1.00KB\n";
    let out = ToolOutput::new(&["wrk"], text, "", Exit::Code(0));
    let r = by_name("wrk")
        .expect("adapter")
        .parse(&out)
        .expect("parses");
    assert_eq!(v(&r, "socket_errors"), 15.0);
    assert_eq!(
        r.errors,
        vec![("read".to_string(), 12), ("timeout".to_string(), 3)]
    );
    assert!(close(v(&r, "transfer_mibps"), 1.0 / 1024.0));
}

#[test]
fn wrk_error() {
    assert_eq!(
        error("wrk", "wrk", "error"),
        "unable to connect to 127.0.0.1:15298 Connection refused (exit status 1)"
    );
}
