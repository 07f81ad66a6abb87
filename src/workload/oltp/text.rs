//! A `perflab.load.oltp/1` document ([`OltpJson`]) read back as sysbench's summary and as the
//! trial's metrics: the figures of the three come from the one document.

use super::backend::Stmt;
use super::report::{example, OltpJson, CLASSES};
use super::stats::stmt_name;
use crate::workload::{Better, Metric, MetricKind, WorkloadResult};
use std::fmt::Write;

impl OltpJson {
    /// The measured time, s (never 0, for the rates).
    fn secs(&self) -> f64 {
        self.measured_s.max(1e-9)
    }

    /// The trial's metrics and failure (not its histograms and series: the report's).
    pub fn to_result(&self) -> WorkloadResult {
        let mut r = WorkloadResult::default();
        let m = &mut r.metrics;
        let t = self.secs();
        let q = &self.queries_per_s;
        m.push(Metric::new("transactions_per_s", "trx/s", self.transactions_per_s, Better::Higher));
        for (name, v) in [
            ("queries_per_s", q.total),
            ("reads_per_s", q.read),
            ("writes_per_s", q.write),
            ("others_per_s", q.other),
        ] {
            m.push(Metric::new(name, "queries/s", v, Better::Higher));
        }
        m.push(Metric::new("transactions", "", self.transactions as f64, Better::Neither));
        m.push(Metric::new("queries", "", self.queries.total as f64, Better::Neither));
        m.push(Metric::new(
            "failed_transactions",
            "",
            self.failed_transactions as f64,
            Better::Lower,
        ));
        if let Some(mean) = self.latency_mean_ms {
            let l = &self.latency_ms;
            for (name, v) in [
                ("latency_p50_ms", l.p50),
                ("latency_p95_ms", l.p95),
                ("latency_p99_ms", l.p99),
                ("latency_max_ms", l.max),
            ] {
                m.push(Metric::new(name, "ms", v, Better::Lower));
            }
            m.push(Metric::new("latency_mean_ms", "ms", mean, Better::Lower));
        }
        for k in Stmt::ALL {
            let name = stmt_name(k);
            let Some(st) = self.statements.get(name) else {
                continue;
            };
            m.push(Metric::new(format!("stmt_{name}_p99_ms"), "ms", st.p99_ms, Better::Lower));
            m.push(Metric::new(
                format!("stmt_{name}_per_s"),
                "queries/s",
                st.ok as f64 / t,
                Better::Neither,
            ));
        }
        let total: u64 = self.errors.values().map(|e| e.count).sum();
        m.push(Metric::new("errors", "", total as f64, Better::Lower));
        for c in CLASSES {
            let e = self.errors.get(c.name());
            let n = e.map_or(0, |e| e.count);
            m.push(Metric::new(format!("errors_{}", c.name()), "", n as f64, Better::Lower));
            m.push(Metric::new(
                format!("errors_{}_per_s", c.name()),
                "errors/s",
                n as f64 / t,
                Better::Lower,
            ));
            if let Some(e) = e {
                r.errors.push((format!("{} (first: {})", c.name(), example(&e.first)), e.count));
            }
        }
        m.push(Metric::new("retries", "", self.retries as f64, Better::Lower));
        m.push(Metric::new("reconnects", "", self.reconnects as f64, Better::Lower));
        m.push(Metric::new("rows_read_per_s", "rows/s", self.rows_read as f64 / t, Better::Neither).with_kind(MetricKind::Rate));
        if self.transactions > 0 {
            let cpu_us = self.client_cpu_s * 1e6 / self.transactions as f64;
            m.push(Metric::new("client_cpu_us_per_trx", "us", cpu_us, Better::Lower).with_kind(MetricKind::Gauge));
        }
        if self.rate.is_some() {
            m.push(Metric::new("late_sends", "", self.late as f64, Better::Lower));
            m.push(Metric::new("dropped_sends", "", self.dropped as f64, Better::Lower));
        }
        r.metrics.retain(|m| m.value.is_finite());
        r.failure = self.failure.clone();
        r
    }

    /// The summary a sysbench user recognises.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let (n, q) = (&self.queries, &self.queries_per_s);
        let model = match self.rate {
            Some(r) => format!("open model at {r} transactions/s"),
            None => "closed model".into(),
        };
        let _ = writeln!(
            s,
            "oltp {} on {}: {} thread(s), {model}, {:.1} s measured{}",
            self.scenario,
            self.db,
            self.threads,
            self.measured_s,
            if self.interrupted { " (interrupted)" } else { "" }
        );
        let _ = writeln!(s, "SQL statistics:");
        let _ = writeln!(
            s,
            "    queries performed:  read {}, write {}, other {}, total {}",
            n.read, n.write, n.other, n.total
        );
        let _ = writeln!(
            s,
            "    transactions:       {} ({:.2} per sec.)",
            self.transactions, self.transactions_per_s
        );
        let _ = writeln!(
            s,
            "    queries:            {:.2} per sec. (read {:.2}, write {:.2}, other {:.2})",
            q.total, q.read, q.write, q.other
        );
        let _ = writeln!(
            s,
            "    failed transactions: {} ({:.2} per sec.)",
            self.failed_transactions,
            self.failed_transactions as f64 / self.secs()
        );
        let _ = writeln!(
            s,
            "    retries: {}, reconnects: {}, rows read: {}",
            self.retries, self.reconnects, self.rows_read
        );
        if self.latency_mean_ms.is_some() {
            let l = &self.latency_ms;
            let _ = writeln!(
                s,
                "Latency (ms) of a transaction: p50 {:.2}, p95 {:.2}, p99 {:.2}, max {:.2}",
                l.p50, l.p95, l.p99, l.max
            );
        }
        if self.errors.is_empty() {
            let _ = writeln!(s, "Errors: none");
        } else {
            let _ = writeln!(s, "Errors:");
            for c in CLASSES {
                if let Some(e) = self.errors.get(c.name()) {
                    let _ = writeln!(s, "    {:<22} {:>8}  first: {}", c.name(), e.count, example(&e.first));
                }
            }
        }
        if self.rate.is_some() && (self.late > 0 || self.dropped > 0) {
            let _ = writeln!(
                s,
                "Open model: {} late, {} dropped of {} intended",
                self.late, self.dropped, self.scheduled
            );
        }
        if let Some(f) = &self.failure {
            let _ = writeln!(s, "Failed: {}", example(f));
        }
        s
    }
}
