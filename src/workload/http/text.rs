//! A `perflab.http/1` document ([`HttpJson`]) read back as the trial's metrics and as the summary
//! an ab user recognises: the figures of the three come from the one document.

use super::report::{percentile_key, HttpJson, PercentilesJson, PERCENTILES};
use crate::workload::{Better, Metric, SeriesPoint, WorkloadResult};
use std::fmt::Write;

impl PercentilesJson {
    /// The percentile `p` (one of [`PERCENTILES`]), ms.
    pub fn at(&self, p: f64) -> f64 {
        self.percentiles.get(&percentile_key(p)).copied().unwrap_or(f64::NAN)
    }

    /// The largest value (its 100th percentile), ms.
    pub fn max(&self) -> f64 {
        self.at(100.0)
    }
}

impl HttpJson {
    /// Transport errors, all classes.
    pub fn transport_errors(&self) -> u64 {
        self.errors.iter().map(|e| e.count).sum()
    }

    /// Responses per status code, ascending.
    fn statuses(&self) -> Vec<(u16, u64)> {
        let mut v: Vec<(u16, u64)> = self.status.iter().filter_map(|(c, n)| Some((c.parse().ok()?, *n))).collect();
        v.sort_unstable();
        v
    }

    /// Responses with status >= 400 (failed requests beside the transport errors).
    pub fn http_errors(&self) -> u64 {
        self.statuses().iter().filter(|(c, _)| *c >= 400).map(|(_, n)| n).sum()
    }

    /// The busiest worker thread's CPU time over its wall time, %.
    pub fn busiest_thread_pct(&self) -> f64 {
        self.client_thread_busy_pct.iter().copied().fold(0.0, f64::max)
    }

    /// The trial's metrics, series, errors and failure (not its histograms: the report's).
    pub fn to_result(&self) -> WorkloadResult {
        let mut r = WorkloadResult::default();
        let m = &mut r.metrics;
        m.push(Metric::new("requests_per_s", "req/s", self.requests_per_s, Better::Higher));
        m.push(Metric::new(
            "transfer_mb_s",
            "MB/s",
            self.body_bytes as f64 / 1_048_576.0 / self.duration_s.max(1e-9),
            Better::Higher,
        ));
        if let Some(lat) = &self.latency_ms {
            for (name, p) in [
                ("latency_p50_ms", 50.0),
                ("latency_p90_ms", 90.0),
                ("latency_p99_ms", 99.0),
                ("latency_p999_ms", 99.9),
            ] {
                m.push(Metric::new(name, "ms", lat.at(p), Better::Lower));
            }
            m.push(Metric::new("latency_mean_ms", "ms", lat.mean, Better::Lower));
            // The spread of the latency (ab's "+/-sd"), from the histogram.
            m.push(Metric::new("latency_sd_ms", "ms", lat.stdev, Better::Lower));
            m.push(Metric::new("latency_max_ms", "ms", lat.max(), Better::Lower));
        }
        m.push(Metric::new("error_rate_pct", "%", self.error_rate_pct, Better::Lower));
        // The measured run's total time (its requests over its throughput), seconds.
        m.push(Metric::new("total_time_s", "s", self.duration_s, Better::Neither));
        m.push(Metric::new("requests", "", self.requests as f64, Better::Neither));
        m.push(Metric::new("errors", "", self.transport_errors() as f64, Better::Lower));
        // The closed model's concurrency (Little's law: throughput × mean latency ≈ connections).
        if self.open_model.is_none() {
            m.push(Metric::new("connections", "", self.connections as f64, Better::Neither));
        }
        if let Some(o) = &self.open_model {
            m.push(Metric::new("target_rate_per_s", "req/s", o.target_rate_per_s, Better::Neither));
            m.push(Metric::new("late_sends", "", o.late as f64, Better::Lower));
            m.push(Metric::new("dropped_sends", "", o.dropped as f64, Better::Lower));
        }
        m.push(Metric::new("reconnects", "", self.reconnects as f64, Better::Neither));
        if let Some(c) = self.client_cpu_us_per_request {
            m.push(Metric::new("loadgen_cpu_us_per_req", "µs", c, Better::Lower));
        }
        if !self.client_thread_busy_pct.is_empty() {
            m.push(Metric::new(
                "loadgen_busiest_thread_pct",
                "%",
                self.busiest_thread_pct(),
                Better::Neither,
            ));
        }
        for t in &self.series {
            r.series.push(SeriesPoint {
                t_s: t.t_s,
                name: "requests_per_s".into(),
                value: t.requests_per_s,
            });
            for (name, v) in [("latency_p50_ms", t.p50_ms), ("latency_p99_ms", t.p99_ms)] {
                if let Some(value) = v {
                    r.series.push(SeriesPoint {
                        t_s: t.t_s,
                        name: name.into(),
                        value,
                    });
                }
            }
        }
        r.errors = self.errors.iter().map(|e| (e.class.to_string(), e.count)).collect();
        for (s, n) in self.statuses() {
            if s >= 400 {
                r.errors.push((format!("status_{s}"), n));
            }
        }
        if self.requests == 0 {
            r.failure = Some(match self.errors.first() {
                Some(e) => format!(
                    "no response: {} {} error(s), e.g. {}",
                    e.count,
                    e.class,
                    e.first.as_deref().unwrap_or("")
                ),
                None => "no response".into(),
            });
        }
        r
    }

    /// The summary an ab user recognises.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let secs = self.duration_s;
        let _ = writeln!(s, "Target:                 {}", self.url);
        let _ = writeln!(
            s,
            "Protocol:               {}{}",
            self.protocol,
            if self.tls { " over TLS" } else { "" }
        );
        let _ = writeln!(s, "Connections:            {} on {} thread(s)", self.connections, self.threads);
        let _ = writeln!(
            s,
            "Time taken:             {secs:.3} s{}",
            if self.interrupted { " (interrupted)" } else { "" }
        );
        let _ = writeln!(s, "Complete requests:      {}", self.requests);
        let _ = writeln!(s, "Failed requests:        {}", self.transport_errors() + self.http_errors());
        for e in &self.errors {
            let _ = writeln!(s, "   {}: {} (first: {})", e.class, e.count, e.first.clone().unwrap_or_default());
        }
        if self.http_errors() > 0 {
            for (code, n) in self.statuses().into_iter().filter(|(c, _)| *c >= 400) {
                let _ = writeln!(s, "   status {code}: {n}");
            }
        }
        if self.in_flight_at_stop > 0 {
            let _ = writeln!(s, "In flight at stop:      {} (not counted)", self.in_flight_at_stop);
        }
        let _ = writeln!(s, "Reconnects:             {}", self.reconnects);
        let _ = writeln!(s, "Requests per second:    {:.2} [#/sec] (mean)", self.requests_per_s);
        if let Some(o) = &self.open_model {
            let _ = writeln!(
                s,
                "Target rate:            {:.2} [#/sec]; achieved {:.2}",
                o.target_rate_per_s, self.requests_per_s
            );
            let _ = writeln!(
                s,
                "Late sends:             {} (more than {} ms after their intended time)",
                o.late, o.late_tolerance_ms
            );
            let _ = writeln!(s, "Dropped sends:          {} (never sent)", o.dropped);
        }
        let _ = writeln!(
            s,
            "Transfer rate:          {:.2} [Kbytes/sec] received (bodies)",
            self.body_bytes as f64 / 1024.0 / secs.max(1e-9)
        );
        if let Some(c) = self.client_cpu_us_per_request {
            let _ = writeln!(
                s,
                "Client CPU:             {c:.1} µs per request ({:.3} s user+sys; busiest thread {:.0} %{})",
                self.client_cpu_s,
                self.busiest_thread_pct(),
                if self.busy_poll {
                    format!("; busy polling, {:.3} s of it polling for nothing", self.client_spin_s)
                } else {
                    String::new()
                }
            );
        }
        for w in &self.warnings {
            let _ = writeln!(s, "WARNING:                {}", w.message);
        }
        let Some(latency) = &self.latency_ms else {
            return s;
        };
        let _ = writeln!(s, "\nConnection Times (ms)\n              min  mean[+/-sd] median   max");
        // An empty histogram's row reads 0 throughout.
        let row = |name: &str, h: Option<&PercentilesJson>| {
            let (min, mean, sd, median, max) = h.map_or((0.0, 0.0, 0.0, 0.0, 0.0), |h| (h.min, h.mean, h.stdev, h.at(50.0), h.max()));
            format!("{name:<9} {min:>7.2} {mean:>6.2} {sd:>5.2} {median:>7.2} {max:>7.2}\n")
        };
        if self.connect_ms.is_some() {
            s.push_str(&row("Connect:", self.connect_ms.as_ref()));
        }
        if self.tls_handshake_ms.is_some() {
            s.push_str(&row("TLS:", self.tls_handshake_ms.as_ref()));
        }
        s.push_str(&row("Waiting:", self.ttfb_ms.as_ref()));
        s.push_str(&row("Service:", self.service_time_ms.as_ref()));
        s.push_str(&row("Total:", Some(latency)));
        let from = if self.open_model.is_some() {
            "from the intended send time"
        } else {
            "from the send"
        };
        let _ = writeln!(s, "\nPercentage of the requests served within a certain time (ms), {from}");
        for p in PERCENTILES {
            let label = format!("{:>5}%", percentile_key(p).trim_start_matches('p'));
            let suffix = if p == 100.0 { " (longest request)" } else { "" };
            let _ = writeln!(s, " {label} {:>9.2}{suffix}", latency.at(p));
        }
        s
    }
}
