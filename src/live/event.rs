//! The events a run publishes (docs/live.md): serialized as JSON with their `kind`, one row each
//! in the store's event log.

use serde::{Deserialize, Serialize};

/// One trial of the plan, as the run starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedTrial {
    pub trial: usize,
    pub point: usize,
    pub repetition: u32,
}

/// One point of the plan's matrix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedPoint {
    pub point: usize,
    pub label: String,
    /// Its parameters as JSON (`{"concurrency": 10}`).
    pub params: serde_json::Value,
}

/// A workload's headline figure at the end of a trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub name: String,
    pub value: f64,
    pub unit: String,
}

/// The key figures of this machine's latest monitor sample (rounded to 0.1), carried by each
/// `second` event: the full sample stays in memory ([`super::Publisher::latest_sample`]) and, once
/// the trial is stored, in its packed series. Besides the totals, the busiest of each kind of
/// resource (a CPU, a disk, a network interface): where a saturation shows first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostNow {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_used_mb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loadgen_cpu_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_cpu_pct: Option<f64>,
    /// The busiest CPU's busy % (`cpuN_busy_pct`'s largest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busiest_cpu_pct: Option<f64>,
    /// The busiest disk's utilization (`disk_NAME_util_pct`'s largest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_util_pct: Option<f64>,
    /// The busiest network interface's busier direction, Mbit/s (the largest of every
    /// `net_NAME_rx_mbitps` and `net_NAME_tx_mbitps`: a full-duplex link fills one direction at a
    /// time, and loopback counts each packet both ways).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_mbit_s: Option<f64>,
    /// The target's process tree's resident memory (`proc_target_rss_mb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_rss_mb: Option<f64>,
}

impl HostNow {
    /// The key figures of a monitor sample's `values`.
    pub fn of(values: &[(String, f64)]) -> HostNow {
        let tenth = |v: f64| (v * 10.0).round() / 10.0;
        let get = |n: &str| values.iter().find(|(k, _)| k == n).map(|(_, v)| tenth(*v));
        let busiest = |f: &dyn Fn(&str) -> bool| {
            values
                .iter()
                .filter(|(k, v)| f(k) && v.is_finite())
                .map(|(_, v)| *v)
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
                .map(tenth)
        };
        let cpu = |k: &str| {
            k.strip_prefix("cpu")
                .and_then(|r| r.strip_suffix("_busy_pct"))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        };
        HostNow {
            cpu_pct: get("cpu_busy_pct"),
            mem_used_mb: get("mem_used_mb"),
            loadgen_cpu_pct: get("proc_loadgen_cpu_pct"),
            target_cpu_pct: get("proc_target_cpu_pct"),
            busiest_cpu_pct: busiest(&cpu),
            disk_util_pct: busiest(&|k| k.starts_with("disk_") && k.ends_with("_util_pct")),
            net_mbit_s: busiest(&|k| k.starts_with("net_") && (k.ends_with("_rx_mbitps") || k.ends_with("_tx_mbitps"))),
            target_rss_mb: get("proc_target_rss_mb"),
        }
    }
}

impl HostNow {
    /// The figures with the names of the monitor's columns they come from (the busiest of a kind
    /// named `busiest_…`), those it has.
    pub fn named(&self) -> Vec<(&'static str, f64)> {
        HOST_CELLS
            .iter()
            .zip(self.cells())
            .filter_map(|(n, v)| v.map(|v| (*n, v)))
            .collect()
    }

    /// The figures in [`HOST_CELLS`]' order.
    pub fn cells(&self) -> [Option<f64>; 8] {
        [
            self.cpu_pct,
            self.mem_used_mb,
            self.loadgen_cpu_pct,
            self.target_cpu_pct,
            self.busiest_cpu_pct,
            self.disk_util_pct,
            self.net_mbit_s,
            self.target_rss_mb,
        ]
    }

    /// The figures from cells in [`HOST_CELLS`]' order (missing ones none).
    pub fn from_cells(c: &[Option<f64>]) -> HostNow {
        let at = |i: usize| c.get(i).copied().flatten();
        HostNow {
            cpu_pct: at(0),
            mem_used_mb: at(1),
            loadgen_cpu_pct: at(2),
            target_cpu_pct: at(3),
            busiest_cpu_pct: at(4),
            disk_util_pct: at(5),
            net_mbit_s: at(6),
            target_rss_mb: at(7),
        }
    }
}

/// The names of [`HostNow`]'s figures, in the order of a stored `host` event's cells.
pub const HOST_CELLS: [&str; 8] = [
    "cpu_busy_pct",
    "mem_used_mb",
    "proc_loadgen_cpu_pct",
    "proc_target_cpu_pct",
    "busiest_cpu_busy_pct",
    "busiest_disk_util_pct",
    "busiest_net_mbitps",
    "proc_target_rss_mb",
];

/// One probe's figures so far in the trial (the `probes` event): its samples whose outcome is
/// known, how many were lost or failed, and the latest of them (the highest `seq`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeNow {
    /// As its metrics name it (`probe_NAME_p99_ms`).
    pub name: String,
    /// `icmp`, `tcp`, `http`, `udp`, `command`.
    pub kind: String,
    /// Samples whose outcome is known.
    pub n: u64,
    /// Of them, lost: no answer within the timeout, or an error.
    pub lost: u64,
    /// Of them, answered with a failure (an HTTP status of 400 or more, a command's non-zero exit).
    pub failed: u64,
    /// The latest sample: its sequence number, phase, outcome and round trip (ms, to 4
    /// significant digits; none when lost).
    pub seq: Option<u64>,
    pub phase: Option<String>,
    pub outcome: Option<String>,
    pub rtt_ms: Option<f64>,
}

/// `x` to `digits` significant digits (what a live view needs, in fewer bytes).
pub fn significant(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(digits - 1 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

fn one() -> f64 {
    1.0
}

fn is_one(x: &f64) -> bool {
    *x == 1.0
}

/// What the run publishes, in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// The run starts (or resumes): the plan's trials still to run and its points.
    RunStart {
        plan: String,
        dir: String,
        /// Trials this run (or this resumption) will run, in order (adaptive rounds add more).
        trials: Vec<PlannedTrial>,
        points: Vec<PlannedPoint>,
        /// Trials stored before (a resumed run).
        done: Vec<usize>,
        /// The phases' lengths, seconds.
        baseline_s: f64,
        warmup_s: f64,
        load_s: f64,
        recovery_s: f64,
        /// The monitor's sampling interval, seconds.
        interval_s: f64,
    },
    /// A trial starts. `asked_per_s`: the rate an open-model load asks (requests per second;
    /// absent for a closed model): one figure for the whole trial, so kept here rather than in
    /// each `second`, which carries what was achieved.
    TrialStart {
        trial: usize,
        point: usize,
        repetition: u32,
        label: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        asked_per_s: Option<f64>,
    },
    /// The trial enters a phase (`setup`, `baseline`, `warmup`, `load`, `recovery`), `t_s` seconds
    /// after the trial started.
    Phase { trial: usize, phase: String, t_s: f64 },
    /// One second of the workload's measured load (the load generator's own per-second series:
    /// workloads on perflab's load driver publish it; an `exec` tool does not). `t_s` counts from
    /// the start of the load phase; the last second may be shorter (`span_s`, left out when 1).
    /// Latencies in ms to 4 significant digits (the histogram's own precision is 3), with this
    /// machine's latest monitor sample's key figures: all kept small, one row a second.
    Second {
        trial: usize,
        t_s: f64,
        #[serde(default = "one", skip_serializing_if = "is_one")]
        span_s: f64,
        responses: u64,
        errors: u64,
        p50_ms: Option<f64>,
        p99_ms: Option<f64>,
        p999_ms: Option<f64>,
        /// This machine's CPU busy % and memory used (MiB), perflab's own process's CPU %
        /// (`proc_loadgen_cpu_pct`) and the target's tree's (`proc_target_cpu_pct`), from the
        /// monitor's latest sample; absent before the first.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<HostNow>,
    },
    /// A remote host's latest monitor sample's key figures (a host of `[hosts]` sampled by its
    /// agent during the trial): published after each `second`, one per host with a sample new
    /// since the last; `t_s` since the trial started, on this machine's clock (as the stored
    /// samples). A host sampled only for the target's process tree has only the target's figures.
    Host {
        trial: usize,
        host: String,
        t_s: f64,
        figures: HostNow,
    },
    /// The plan's probes' figures so far (one a second while they run, and their final ones when
    /// they stop, equal to the stored probe rows).
    Probes { trial: usize, probes: Vec<ProbeNow> },
    /// A trial ended and is stored: whether it succeeded, why not, its headline figures and its
    /// phases' spans (seconds since it started).
    TrialEnd {
        trial: usize,
        ok: bool,
        failure: Option<String>,
        figures: Vec<Figure>,
        phases: Vec<(String, f64, f64)>,
    },
    /// Adaptive repetitions: a point's confidence interval after a round, against its target.
    Ci {
        point: usize,
        metric: Option<String>,
        half_width_pct: Option<f64>,
        target_pct: f64,
        repetitions: u32,
        /// Why its repetitions stopped (none: another round runs).
        stopped: Option<String>,
    },
    /// A threshold of the plan at a point as it stands: judged over the point's trials stored so
    /// far, after each of them is stored, by the rule the run's end judges it with over all of
    /// them (the store's `threshold` rows). `observed` (none: no successful trial has the metric,
    /// which breaks it) and `basis` say what it was judged on ("mean of 2 trials").
    Threshold {
        expr: String,
        point: usize,
        observed: Option<f64>,
        basis: String,
        passed: bool,
    },
    /// The feed could not keep up: this many events were dropped (never the runner waiting).
    Skipped { count: u64 },
    /// The run ended: its status, the trials, the thresholds that broke.
    RunEnd {
        status: String,
        trials_ok: usize,
        trials_failed: usize,
        thresholds_failed: Vec<String>,
        failure: Option<String>,
    },
}

impl Event {
    /// The event as the store keeps it (the row's `body`): JSON, except a `second`, kept as a
    /// bare array `[t_s, responses, errors, p50_ms, p99_ms, p999_ms, cpu_pct, mem_used_mb,
    /// loadgen_cpu_pct, target_cpu_pct, span_s, busiest_cpu_pct, disk_util_pct, net_mbit_s,
    /// target_rss_mb]` (trailing nulls and a `span_s` of 1 left out; its kind and trial are the
    /// row's columns): one a second, so every byte counts.
    pub fn stored_body(&self) -> serde_json::Result<String> {
        if let Event::Second {
            t_s,
            span_s,
            responses,
            errors,
            p50_ms,
            p99_ms,
            p999_ms,
            host,
            ..
        } = self
        {
            let h = host.unwrap_or_default();
            let mut a = vec![
                Some(*t_s),
                Some(*responses as f64),
                Some(*errors as f64),
                *p50_ms,
                *p99_ms,
                *p999_ms,
                h.cpu_pct,
                h.mem_used_mb,
                h.loadgen_cpu_pct,
                h.target_cpu_pct,
                (*span_s != 1.0).then_some(*span_s),
                h.busiest_cpu_pct,
                h.disk_util_pct,
                h.net_mbit_s,
                h.target_rss_mb,
            ];
            while a.last() == Some(&None) {
                a.pop();
            }
            return Ok(crate::store::events::cells_text(&a));
        }
        if let Event::Host { host, t_s, figures, .. } = self {
            // `["server",t_s,cpu_pct,…]`: the host's name, then the cells in `HOST_CELLS`' order.
            let mut a = vec![Some(*t_s)];
            a.extend(figures.cells());
            while a.last() == Some(&None) {
                a.pop();
            }
            let cells = crate::store::events::cells_text(&a);
            return Ok(format!("[{},{}", serde_json::to_string(host)?, &cells[1..]));
        }
        serde_json::to_string(self)
    }

    /// An event read back from a row of the store's log (its `kind`, `trial` and `body`).
    pub fn from_stored(kind: &str, trial: Option<i64>, body: &str) -> serde_json::Result<Event> {
        if kind == "host" {
            let a: Vec<serde_json::Value> = serde_json::from_str(body)?;
            let cells: Vec<Option<f64>> = a.iter().skip(2).map(serde_json::Value::as_f64).collect();
            return Ok(Event::Host {
                trial: trial.unwrap_or(0).max(0) as usize,
                host: a.first().and_then(|v| v.as_str()).unwrap_or_default().to_string(),
                t_s: a.get(1).and_then(serde_json::Value::as_f64).unwrap_or(0.0),
                figures: HostNow::from_cells(&cells),
            });
        }
        if kind != "second" {
            return serde_json::from_str(body);
        }
        let a: Vec<Option<f64>> = serde_json::from_str(body)?;
        let at = |i: usize| a.get(i).copied().flatten();
        let host = HostNow {
            cpu_pct: at(6),
            mem_used_mb: at(7),
            loadgen_cpu_pct: at(8),
            target_cpu_pct: at(9),
            busiest_cpu_pct: at(11),
            disk_util_pct: at(12),
            net_mbit_s: at(13),
            target_rss_mb: at(14),
        };
        Ok(Event::Second {
            trial: trial.unwrap_or(0).max(0) as usize,
            t_s: at(0).unwrap_or(0.0),
            span_s: at(10).unwrap_or(1.0),
            responses: at(1).unwrap_or(0.0) as u64,
            errors: at(2).unwrap_or(0.0) as u64,
            p50_ms: at(3),
            p99_ms: at(4),
            p999_ms: at(5),
            host: (host != HostNow::default()).then_some(host),
        })
    }

    /// The event's `kind` (the store's column).
    pub fn kind(&self) -> &'static str {
        match self {
            Event::RunStart { .. } => "run_start",
            Event::TrialStart { .. } => "trial_start",
            Event::Phase { .. } => "phase",
            Event::Second { .. } => "second",
            Event::Host { .. } => "host",
            Event::Probes { .. } => "probes",
            Event::TrialEnd { .. } => "trial_end",
            Event::Ci { .. } => "ci",
            Event::Threshold { .. } => "threshold",
            Event::Skipped { .. } => "skipped",
            Event::RunEnd { .. } => "run_end",
        }
    }

    /// The trial it is about.
    pub fn trial(&self) -> Option<usize> {
        match self {
            Event::TrialStart { trial, .. }
            | Event::Phase { trial, .. }
            | Event::Second { trial, .. }
            | Event::Host { trial, .. }
            | Event::Probes { trial, .. }
            | Event::TrialEnd { trial, .. } => Some(*trial),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_json_with_its_kind() {
        let e = Event::Phase {
            trial: 3,
            phase: "load".into(),
            t_s: 1.5,
        };
        let j = serde_json::to_string(&e).unwrap();
        assert_eq!(j, r#"{"kind":"phase","trial":3,"phase":"load","t_s":1.5}"#);
        assert_eq!(serde_json::from_str::<Event>(&j).unwrap(), e);
        assert_eq!(e.kind(), "phase");
        assert_eq!(e.trial(), Some(3));
    }

    #[test]
    fn a_second_is_small_and_reads_back() {
        let e = Event::Second {
            trial: 2,
            t_s: 5.0,
            span_s: 1.0,
            responses: 400,
            errors: 0,
            p50_ms: Some(significant(0.123456, 4)),
            p99_ms: Some(significant(12.34567, 4)),
            p999_ms: None,
            host: Some(HostNow::of(&[("cpu_busy_pct".into(), 37.26), ("mem_used_mb".into(), 2048.04)])),
        };
        // The busiest CPU, disk and interface direction of a sample (not the totals' columns).
        let h = HostNow::of(&[
            ("cpu_busy_pct".into(), 50.0),
            ("cpu0_busy_pct".into(), 12.04),
            ("cpu1_busy_pct".into(), 87.96),
            ("cpu1_user_pct".into(), 99.0),
            ("disk_vda_util_pct".into(), 3.0),
            ("disk_vdb_util_pct".into(), 41.26),
            ("net_lo_rx_mbitps".into(), 120.0),
            ("net_lo_tx_mbitps".into(), 120.0),
            ("net_eth0_rx_mbitps".into(), 900.04),
            ("net_eth0_rx_pkts_per_s".into(), 90000.0),
            ("proc_target_rss_mb".into(), 35.56),
        ]);
        assert_eq!(
            (h.busiest_cpu_pct, h.disk_util_pct, h.net_mbit_s, h.target_rss_mb),
            (Some(88.0), Some(41.3), Some(900.0), Some(35.6))
        );
        let with = Event::Second {
            trial: 2,
            t_s: 6.0,
            span_s: 1.0,
            responses: 1,
            errors: 0,
            p50_ms: None,
            p99_ms: None,
            p999_ms: None,
            host: Some(h),
        };
        let stored = with.stored_body().unwrap();
        assert_eq!(stored, "[6,1,0,null,null,null,50,null,null,null,null,88,41.3,900,35.6]");
        assert_eq!(Event::from_stored("second", Some(2), &stored).unwrap(), with);
        let j = serde_json::to_string(&e).unwrap();
        assert_eq!(
            j,
            r#"{"kind":"second","trial":2,"t_s":5.0,"responses":400,"errors":0,"p50_ms":0.1235,"p99_ms":12.35,"p999_ms":null,"host":{"cpu_pct":37.3,"mem_used_mb":2048.0}}"#
        );
        assert_eq!(serde_json::from_str::<Event>(&j).unwrap(), e);
        let stored = e.stored_body().unwrap();
        assert_eq!(stored, "[5,400,0,0.1235,12.35,null,37.3,2048]");
        assert_eq!(Event::from_stored("second", Some(2), &stored).unwrap(), e);
        let last = Event::Second {
            trial: 2,
            t_s: 5.0,
            span_s: 0.25,
            responses: 400,
            errors: 0,
            p50_ms: Some(0.1235),
            p99_ms: Some(12.35),
            p999_ms: None,
            host: None,
        };
        let stored = last.stored_body().unwrap();
        assert_eq!(stored, "[5,400,0,0.1235,12.35,null,null,null,null,null,0.25]");
        assert_eq!(Event::from_stored("second", Some(2), &stored).unwrap(), last);
        assert_eq!(significant(123456.0, 3), 123000.0);
        let host = Event::Host {
            trial: 2,
            host: "db \"1\"".into(),
            t_s: 3.25,
            figures: h,
        };
        let stored = host.stored_body().unwrap();
        assert_eq!(stored, r#"["db \"1\"",3.25,50,null,null,null,88,41.3,900,35.6]"#);
        assert_eq!(Event::from_stored("host", Some(2), &stored).unwrap(), host);
        assert_eq!(h.named()[1], ("busiest_cpu_busy_pct", 88.0));
        assert_eq!(significant(-0.0098765, 2), -0.0099);
    }
}
