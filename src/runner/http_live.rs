//! `perflab http URL ... --live`: the load run as a one-trial plan through the runner (as `perflab
//! run --live` runs a plan: the live server, the store, the run directory), then the command's
//! summary from the stored trial's figures, and its exit codes (src/workload/http/cli.rs).

use super::one_trial::{OneTrial, Summary};
use crate::error::usage;
use crate::store::{RunStatus, StoredTrial};
use crate::workload::http::cli::HttpArgs;
use crate::workload::http::{percentile_key, PercentilesJson, Prepared, PERCENTILES};
use std::fmt::Write;

/// Run `perflab http ... --live`; the exit code (0, 1, 130 as without `--live`; 2 for bad input).
pub fn run(a: HttpArgs) -> anyhow::Result<i32> {
    let live = a.live.as_deref().unwrap_or(crate::live::watch::DEFAULT_ADDR);
    crate::live::watch::parse_addr(live)?;
    super::cli::check_runs_dir(&a.runs_dir)?;
    if a.json {
        return Err(usage(
            "--json cannot be used with --live: the run is stored in its run directory (perflab report DIR --format json)",
        ));
    }
    if a.hdr_log.is_some() {
        return Err(usage(
            "--hdr-log cannot be used with --live: the run's histograms are kept in its store",
        ));
    }
    if a.engine.is_some() {
        return Err(usage("--engine cannot be used with --live"));
    }
    let Some(duration) = a.settings.duration.clone() else {
        return Err(usage("--live needs -d DURATION: the run's load phase"));
    };
    super::one_trial::check(live, &a.runs_dir, &duration, a.warmup.as_deref())?;
    // Bad input (the URL, a body file) is said before anything starts.
    let prepared = crate::workload::http::prepare(&a.settings)?;
    let mut settings = a.settings.clone();
    if settings.requests.is_none() {
        // The load phase is the duration.
        settings.duration = None;
    }
    let trial = OneTrial {
        label: "perflab http",
        kind: "http",
        workload: toml::Table::try_from(&settings)?,
        load: &duration,
        warmup: a.warmup.as_deref(),
        live,
        runs_dir: &a.runs_dir,
        quiet: a.quiet,
    };
    super::one_trial::run(trial, &HttpSummary(prepared))
}

/// `perflab http`'s summary and exit code, from the stored trial.
struct HttpSummary(Prepared);

impl Summary for HttpSummary {
    fn summary(&self, t: &StoredTrial, status: RunStatus) -> String {
        summary(t, &self.0, status)
    }

    /// A request ended in a transport error, or none was answered.
    fn failed(&self, t: &StoredTrial) -> bool {
        t.metric("errors").unwrap_or(0.0) > 0.0 || t.metric("requests").unwrap_or(0.0) == 0.0
    }
}

/// The command's summary (as `perflab http` prints it) from the stored trial's metrics and
/// histograms: the same lines as far as the store keeps them.
fn summary(t: &StoredTrial, p: &Prepared, status: RunStatus) -> String {
    let m = |name: &str| t.metric(name).unwrap_or(0.0);
    let mut s = String::new();
    let _ = writeln!(s, "Target:                 {}", p.url);
    let tls = if p.tls.is_some() { " over TLS" } else { "" };
    let _ = writeln!(s, "Protocol:               {}{tls}", p.protocol.name());
    let _ = writeln!(s, "Connections:            {} on {} thread(s)", p.connections, p.threads);
    let interrupted = if status == RunStatus::Interrupted { " (interrupted)" } else { "" };
    let _ = writeln!(s, "Time taken:             {:.3} s{interrupted}", m("total_time_s"));
    let _ = writeln!(s, "Complete requests:      {}", m("requests"));
    let failed: u64 = t.errors.iter().map(|(_, n)| n).sum();
    let _ = writeln!(s, "Failed requests:        {failed}");
    for (class, n) in &t.errors {
        let class = class.strip_prefix("status_").map_or(class.clone(), |c| format!("status {c}"));
        let _ = writeln!(s, "   {class}: {n}");
    }
    let _ = writeln!(s, "Reconnects:             {}", m("reconnects"));
    let rps = m("requests_per_s");
    let _ = writeln!(s, "Requests per second:    {rps:.2} [#/sec] (mean)");
    if let Some(rate) = t.metric("target_rate_per_s") {
        let _ = writeln!(s, "Target rate:            {rate:.2} [#/sec]; achieved {rps:.2}");
        let _ = writeln!(s, "Late sends:             {} (after their intended time)", m("late_sends"));
        let _ = writeln!(s, "Dropped sends:          {} (never sent)", m("dropped_sends"));
    }
    let _ = writeln!(
        s,
        "Transfer rate:          {:.2} [Kbytes/sec] received (bodies)",
        m("transfer_mb_s") * 1024.0
    );
    if let Some(c) = t.metric("loadgen_cpu_us_per_req") {
        let _ = writeln!(
            s,
            "Client CPU:             {c:.1} µs per request (busiest thread {:.0} %)",
            m("loadgen_busiest_thread_pct")
        );
    }
    let hist = |name: &str| {
        t.histograms
            .iter()
            .find(|h| h.name == name)
            .and_then(|h| PercentilesJson::of(&h.hist))
    };
    let Some(latency) = hist("latency") else {
        return s;
    };
    let _ = writeln!(s, "\nConnection Times (ms)\n              min  mean[+/-sd] median   max");
    let row = |name: &str, h: Option<&PercentilesJson>| {
        let (min, mean, sd, median, max) = h.map_or((0.0, 0.0, 0.0, 0.0, 0.0), |h| (h.min, h.mean, h.stdev, h.at(50.0), h.max()));
        format!("{name:<9} {min:>7.2} {mean:>6.2} {sd:>5.2} {median:>7.2} {max:>7.2}\n")
    };
    for (label, name) in [("Connect:", "connect"), ("TLS:", "tls_handshake")] {
        if let Some(h) = hist(name) {
            s.push_str(&row(label, Some(&h)));
        }
    }
    s.push_str(&row("Waiting:", hist("ttfb").as_ref()));
    s.push_str(&row("Service:", hist("service_time").as_ref()));
    s.push_str(&row("Total:", Some(&latency)));
    let from = if p.rate.is_some() {
        "from the intended send time"
    } else {
        "from the send"
    };
    let _ = writeln!(s, "\nPercentage of the requests served within a certain time (ms), {from}");
    for q in PERCENTILES {
        let label = format!("{:>5}%", percentile_key(q).trim_start_matches('p'));
        let suffix = if q == 100.0 { " (longest request)" } else { "" };
        let _ = writeln!(s, " {label} {:>9.2}{suffix}", latency.at(q));
    }
    s
}
