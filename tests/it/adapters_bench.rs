//! sysbench, pgbench, ab and wrk adapters against real outputs captured from the tools
//! (tests/fixtures/tools, see its README): exact figures, and each tool's error case.

use crate::adapters_common;

use adapters_common::*;
use perflab::workload::exec::adapters::{by_name, ToolOutput};
use perflab::workload::exec::process::Exit;

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
    assert_eq!(v(&r, "transactions"), 6455.0);
    assert_eq!(v(&r, "transactions_per_s"), 3218.54);
    assert_eq!(v(&r, "queries"), 103280.0);
    assert_eq!(v(&r, "queries_per_s"), 51496.72);
    // 16 queries per read-only transaction: 14 reads (10 point + 4 range) and BEGIN/COMMIT.
    assert_eq!(v(&r, "queries_read"), 14.0 * 6455.0);
    assert_eq!(v(&r, "queries_other"), 2.0 * 6455.0);
    assert_eq!(v(&r, "queries_write"), 0.0);
    assert!(r.errors.is_empty());
}

#[test]
fn sysbench_interval_lines_become_series() {
    let text = "[ 1s ] thds: 4 tps: 120.00 qps: 2400.50 (r/w/o: 1680.00/480.00/240.50) lat (ms,95%): 11.24 err/s: 0.00 reconn/s: 0.00\n\
                [ 2s ] thds: 4 tps: 130.00 qps: 2600.00 (r/w/o: 1820.00/520.00/260.00) lat (ms,95%): 10.50 err/s: 1.00 reconn/s: 0.00\n";
    let full = format!("{text}{}", read(&format!("{DIR}/sysbench/oltp_read_write.stdout")));
    let out = ToolOutput::new(&["sysbench", "oltp_read_write", "run"], full, "", Exit::Code(0));
    let r = by_name("sysbench").expect("adapter").parse(&out).expect("parses");
    let tps: Vec<(f64, f64)> = r.series.iter().filter(|p| p.name == "tps").map(|p| (p.t_s, p.value)).collect();
    assert_eq!(tps, vec![(1.0, 120.0), (2.0, 130.0)]);
    let p95: Vec<f64> = r.series.iter().filter(|p| p.name == "latency_p95_ms").map(|p| p.value).collect();
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
    let r = by_name("pgbench").expect("adapter").parse(&out).expect("parses");
    let s: Vec<(f64, &str, f64)> = r.series.iter().map(|p| (p.t_s, p.name.as_str(), p.value)).collect();
    assert_eq!(s, vec![(1.0, "tps", 1494.4), (1.0, "latency_avg_ms", 5.213)]);
}

#[test]
fn pgbench_without_progress_reports_the_derived_average_as_such() {
    let r = parse("pgbench", "pgbench", "select_only");
    assert_eq!(v(&r, "transactions_per_s"), 28292.311468);
    assert_eq!(v(&r, "transactions"), 56251.0);
    assert_eq!(v(&r, "latency_avg_derived_ms"), 0.071);
    assert!(r.metric("latency_avg_ms").is_none(), "not measured without -P/-R/-L");
}

#[test]
fn pgbench_older_versions_report_both_tps() {
    let text = "number of transactions actually processed: 1000/1000\nlatency average = 1.5 ms\n\
                tps = 650.5 (including connections establishing)\ntps = 660.25 (excluding connections establishing)\n";
    let out = ToolOutput::new(&["pgbench"], text, "", Exit::Code(0));
    let r = by_name("pgbench").expect("adapter").parse(&out).expect("parses");
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
    assert_eq!(r.errors, vec![("length".to_string(), 412), ("non_2xx".to_string(), 88)]);
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
    assert!(r.histograms.is_empty(), "percentiles alone cannot make a histogram");
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
    let r = by_name("wrk").expect("adapter").parse(&out).expect("parses");
    assert_eq!(v(&r, "socket_errors"), 15.0);
    assert_eq!(r.errors, vec![("read".to_string(), 12), ("timeout".to_string(), 3)]);
    assert!(close(v(&r, "transfer_mibps"), 1.0 / 1024.0));
}

#[test]
fn wrk_error() {
    assert_eq!(
        error("wrk", "wrk", "error"),
        "unable to connect to 127.0.0.1:15298 Connection refused (exit status 1)"
    );
}
