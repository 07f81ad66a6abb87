//! The metric names an exec trial can have: the command's own (wall and CPU time, peak RSS, exit
//! status) and those of its tool adapter. A name that depends on the run (a fio job, a stress-ng
//! stressor, a printed percentile) is a pattern where `*` stands for that part. A test runs every
//! adapter on the captured outputs in `tests/fixtures/tools` and checks each name it gives is here.

use super::adapters::Adapter;
use crate::workload::Produces;

/// What every command gives, with or without an adapter.
pub const COMMAND: &[&str] = &["wall_time_s", "cpu_user_s", "cpu_system_s", "max_rss_mb", "exit_status"];

const AB: &[&str] = &[
    "requests_per_s",
    "time_per_request_ms",
    "time_per_request_all_ms",
    "transfer_kib_per_s",
    "time_taken_s",
    "concurrency",
    "complete_requests",
    "failed_requests",
    "non_2xx_responses",
    "write_errors",
    "keep_alive_requests",
    "total_transferred_bytes",
    "html_transferred_bytes",
    "latency_p*_ms",
];
const AB_ROWS: &[&str] = &["connect", "processing", "waiting", "total"];
const AB_COLUMNS: &[&str] = &["min", "mean", "sd", "median", "max"];

const IPERF3: &[&str] = &[
    "sent_mbitps",
    "received_mbitps",
    "jitter_ms",
    "lost_packets",
    "lost_pct",
    "packets",
    "retransmits",
    "rtt_mean_us",
    "rtt_max_us",
    "client_cpu_pct",
    "server_cpu_pct",
];

const MEMTESTER: &[&str] = &["memtest_*_pass", "memtest_tests_passed", "memtest_tests_failed", "memtest_loops"];

const PGBENCH: &[&str] = &[
    "transactions_per_s",
    "transactions_incl_connect_per_s",
    "transactions",
    "failed_transactions",
    "failed_transactions_pct",
    "latency_avg_ms",
    "latency_stddev_ms",
    "latency_avg_derived_ms",
    "initial_connection_time_ms",
];

/// `--metrics-brief` lines give these per stressor; `--yaml` adds the stressor's own figures.
const STRESS_NG: &[&str] = &[
    "*_bogo_ops",
    "*_wall_time_s",
    "*_user_time_s",
    "*_system_time_s",
    "*_bogo_ops_per_s",
    "*_bogo_ops_per_cpu_s",
];
const STRESS_NG_YAML: &[&str] = &["*_cpu_usage_pct", "*_max_rss_mb", "*_*"];

const SYSBENCH: &[&str] = &[
    "operations_per_s",
    "transfer_mibps",
    "reads_per_s",
    "writes_per_s",
    "fsyncs_per_s",
    "read_mibps",
    "write_mibps",
    "queries_read",
    "queries_write",
    "queries_other",
    "transactions",
    "transactions_per_s",
    "queries",
    "queries_per_s",
    "ignored_errors",
    "ignored_errors_per_s",
    "reconnects",
    "reconnects_per_s",
    "total_time_s",
    "events",
    "events_per_s",
    "latency_min_ms",
    "latency_avg_ms",
    "latency_max_ms",
    "latency_p*_ms",
];

const WRK: &[&str] = &[
    "requests_per_s",
    "transfer_mibps",
    "requests",
    "duration_s",
    "read_bytes",
    "latency_avg_ms",
    "latency_stdev_ms",
    "latency_max_ms",
    "latency_within_stdev_pct",
    "thread_req_per_s_avg",
    "thread_req_per_s_stdev",
    "thread_req_per_s_max",
    "latency_p*_ms",
    "socket_errors",
    "non_2xx_3xx_responses",
];

/// The names a command read by `adapter` (none: the command's own only) can give; `Any` for an
/// adapter this list does not know.
pub fn produces(adapter: Option<&dyn Adapter>, words: &[String]) -> Produces {
    let mut names: Vec<String> = COMMAND.iter().map(|s| s.to_string()).collect();
    let Some(a) = adapter else {
        return Produces::Only(names);
    };
    let own: Vec<String> = match a.name() {
        "ab" => AB
            .iter()
            .map(|s| s.to_string())
            .chain(AB_ROWS.iter().flat_map(|r| AB_COLUMNS.iter().map(move |c| format!("{r}_{c}_ms"))))
            .collect(),
        "fio" => fio(),
        "iperf3" => strings(IPERF3),
        "memtester" => strings(MEMTESTER),
        "pgbench" => strings(PGBENCH),
        "stress-ng" => {
            let yaml = super::adapters::option(words, "--yaml", Some("-Y")).is_some();
            strings(STRESS_NG)
                .into_iter()
                .chain(if yaml { strings(STRESS_NG_YAML) } else { Vec::new() })
                .collect()
        }
        "sysbench" => strings(SYSBENCH),
        "wrk" => strings(WRK),
        _ => return Produces::Any,
    };
    names.extend(own);
    Produces::Only(names)
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// fio: per direction totals, per job (`<job>_read_iops`) and, for a single job, its latencies
/// without the job's name too.
fn fio() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["read", "write", "trim"] {
        for prefix in ["", "*_"] {
            out.push(format!("{prefix}{dir}_iops"));
            out.push(format!("{prefix}{dir}_bw_mibps"));
            for kind in ["clat", "lat"] {
                out.push(format!("{prefix}{dir}_{kind}_mean_us"));
                out.push(format!("{prefix}{dir}_{kind}_p*_us"));
            }
        }
    }
    out.push("*_usr_cpu_pct".into());
    out.push("*_sys_cpu_pct".into());
    out
}
