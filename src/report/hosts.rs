//! The report per host, for runs with remote hosts (`[hosts]`, docs/agent.md): every host's facts
//! (CPU model, cores, memory, kernel, perflab version, clock offset ± uncertainty), the Baseline /
//! Under load / Peak / Recovery table and the time-series charts of each remote host's samples, the
//! bottleneck rules run once per host's samples (findings named "server: CPU saturated"), and the
//! offset warnings. `perflab compare` of runs made against different machines puts the machines'
//! facts side by side.
//!
//! A run without remote hosts gives an empty [`Hosts`]: the report is the one it always was.

use super::loaded::{key_system_metric, safe, Loaded};
use super::phases::{idle_device, PhaseRow};
use crate::analysis::bottleneck::{Context, Finding};
use crate::analysis::phases::PhaseStats;
use crate::store::{Store, LOCAL_HOST};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// How many time-series charts each remote host gets at most.
pub const MAX_HOST_CHARTS: usize = 8;

/// One host of one run, as the run found it before it started.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct HostFacts {
    pub run: String,
    /// The plan's name for it (`local`, `server`).
    pub name: String,
    /// Its ssh destination ("" for `local`).
    pub ssh: String,
    pub hostname: String,
    pub arch: String,
    pub cpu_model: String,
    pub cpus: usize,
    pub mem_total_mb: f64,
    pub kernel: String,
    pub perflab_version: String,
    /// Its clock minus this machine's, ms, ± `uncertainty_ms`, as measured before the run.
    pub offset_ms: f64,
    pub uncertainty_ms: f64,
    /// The run's sampling interval, ms (0 when unknown).
    pub interval_ms: f64,
    /// How many times its offset was measured during the run (at the start and the end of each
    /// trial that talked to it); 0 for `local` and for a run stored before these were kept.
    pub clock_measurements: usize,
    /// The smallest and largest offset measured during the run, ms.
    pub offset_min_ms: f64,
    pub offset_max_ms: f64,
    /// The largest uncertainty measured during the run, ms.
    pub worst_uncertainty_ms: f64,
    /// The trials in which an uncertainty exceeded a tenth of the sampling interval.
    pub uncertain_trials: Vec<usize>,
}

/// One clock measurement as the store keeps it (`Store::clocks`; the runner's `remote::Measured`).
#[derive(serde::Deserialize)]
struct StoredClock {
    host: String,
    offset_s: f64,
    uncertainty_s: f64,
}

/// Fill `h`'s offset range, worst uncertainty and uncertain trials from the run's measurements.
fn add_clocks(h: &mut HostFacts, clocks: &[(usize, StoredClock)]) {
    let mine: Vec<&(usize, StoredClock)> = clocks.iter().filter(|(_, c)| c.host == h.name).collect();
    if mine.is_empty() {
        return;
    }
    let ms = |v: f64| v * 1e3;
    h.clock_measurements = mine.len();
    h.offset_min_ms = mine.iter().map(|(_, c)| ms(c.offset_s)).fold(f64::INFINITY, f64::min);
    h.offset_max_ms = mine.iter().map(|(_, c)| ms(c.offset_s)).fold(f64::NEG_INFINITY, f64::max);
    h.worst_uncertainty_ms = mine.iter().map(|(_, c)| ms(c.uncertainty_s)).fold(0.0, f64::max);
    for (trial, c) in mine {
        if h.interval_ms > 0.0 && ms(c.uncertainty_s) > h.interval_ms / 10.0 && !h.uncertain_trials.contains(trial) {
            h.uncertain_trials.push(*trial);
        }
    }
}

/// A run's own machine, as its run row gives it (for a run without `meta.hosts`).
#[derive(Clone, Debug, Default)]
pub struct RunMachine {
    pub run: String,
    pub hostname: String,
    pub kernel: String,
    pub ncpu: u32,
    pub mem_total_mb: f64,
    pub perflab_version: String,
}

/// A chart's data: its title, the trial's phases and metric → (t_s, value).
pub type Series = (String, Vec<crate::model::PhaseSpan>, BTreeMap<String, Vec<(f64, f64)>>);

/// One point's system table on one host.
#[derive(Clone, Debug, Serialize)]
pub struct HostPoint {
    pub label: String,
    /// Trials of the point with samples of this host.
    pub trials: usize,
    pub system: Vec<PhaseRow>,
}

/// The tables and charts of one remote host.
#[derive(Clone, Debug, Serialize)]
pub struct HostReport {
    pub host: String,
    pub points: Vec<HostPoint>,
    /// The chart files (`charts/…`) of its trials.
    pub charts: Vec<String>,
}

/// Everything the report says per host.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Hosts {
    /// Every host of every run, `local` first in each run.
    pub facts: Vec<HostFacts>,
    /// One per remote host (by name, over all runs).
    pub reports: Vec<HostReport>,
    /// `perflab compare` of runs that measured different machines: the machine each run measured
    /// (its remote host, else `local`), side by side; empty otherwise.
    pub compared: Vec<HostFacts>,
}

impl Hosts {
    pub fn is_empty(&self) -> bool {
        self.facts.is_empty() && self.compared.is_empty()
    }
}

/// The hosts stored with one run (`meta.hosts`, with the offsets measured during the run), or its
/// `local` machine from the run row.
fn run_hosts(dir: &Path, facts: &RunMachine) -> anyhow::Result<Vec<HostFacts>> {
    let store = Store::open(dir)?;
    let stored = store.hosts()?;
    let clocks: Vec<(usize, StoredClock)> = store.clocks()?;
    let list = stored.as_ref().and_then(|v| v.as_array()).cloned().unwrap_or_default();
    let text = |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or_default().to_string();
    let num = |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_f64()).unwrap_or(0.0);
    let mut out: Vec<HostFacts> = list
        .iter()
        .map(|h| {
            let f = h.get("facts").cloned().unwrap_or_default();
            HostFacts {
                run: facts.run.clone(),
                name: text(h, "name"),
                ssh: text(h, "ssh"),
                hostname: text(&f, "hostname"),
                arch: text(&f, "arch"),
                cpu_model: text(&f, "cpu_model"),
                cpus: num(&f, "cpus") as usize,
                mem_total_mb: num(&f, "mem_bytes") / 1048576.0,
                kernel: text(&f, "kernel"),
                perflab_version: text(h, "perflab"),
                offset_ms: num(h, "offset_s") * 1e3,
                uncertainty_ms: num(h, "uncertainty_s") * 1e3,
                interval_ms: num(h, "interval_s") * 1e3,
                ..HostFacts::default()
            }
        })
        .collect();
    for h in &mut out {
        add_clocks(h, &clocks);
    }
    if !out.iter().any(|h| h.name == LOCAL_HOST) {
        out.insert(
            0,
            HostFacts {
                run: facts.run.clone(),
                name: LOCAL_HOST.into(),
                hostname: facts.hostname.clone(),
                cpus: facts.ncpu as usize,
                mem_total_mb: facts.mem_total_mb,
                kernel: facts.kernel.clone(),
                perflab_version: facts.perflab_version.clone(),
                ..HostFacts::default()
            },
        );
    }
    Ok(out)
}

/// What the per-host parts of the report need.
pub struct Inputs<'a> {
    pub dirs: &'a [&'a Path],
    pub runs: Vec<RunMachine>,
    /// (point label, its trials), in point order.
    pub groups: &'a [(String, Vec<&'a Loaded>)],
    /// `perflab compare`.
    pub compare: bool,
    /// Charts already drawn before the hosts' (their files are numbered after them).
    pub charted: usize,
}

/// The per-host model, the hosts' findings and their charts' series. `findings` (this machine's)
/// get the host `local` when a run has remote hosts; each remote host's are added after them.
pub fn build(i: &Inputs, findings: &mut Vec<Finding>) -> anyhow::Result<(Hosts, Vec<Series>)> {
    let mut facts = Vec::new();
    let mut compared = Vec::new();
    for (dir, run) in i.dirs.iter().zip(&i.runs) {
        let hosts = run_hosts(dir, run)?;
        let measured = hosts.iter().find(|h| h.name != LOCAL_HOST).or(hosts.first());
        compared.extend(measured.cloned());
        if hosts.len() > 1 {
            facts.extend(hosts);
        }
    }
    let mut names: Vec<String> = Vec::new();
    for h in facts.iter().filter(|h| h.name != LOCAL_HOST) {
        if !names.contains(&h.name) {
            names.push(h.name.clone());
        }
    }
    if !names.is_empty() {
        for f in findings.iter_mut() {
            f.host = Some(LOCAL_HOST.to_string());
        }
    }
    let mut reports = Vec::new();
    let mut series = Vec::new();
    for name in &names {
        let ncpu = facts.iter().filter(|h| &h.name == name).map(|h| h.cpus as u32).max().unwrap_or(1);
        let mut ctx = Context::of(ncpu.max(1));
        ctx.loadgen_unsampled = same_machine(&facts, name);
        findings.extend(host_findings(name, i.groups, &ctx)?);
        let (report, charts) = host_report(name, i.groups, i.charted + series.len())?;
        reports.push(report);
        series.extend(charts);
    }
    // Side by side only when the runs measured different machines.
    let machine = |h: &HostFacts| {
        (
            h.name.clone(),
            h.ssh.clone(),
            h.hostname.clone(),
            h.cpu_model.clone(),
            h.cpus,
            h.kernel.clone(),
        )
    };
    let compare = i.compare && compared.len() >= 2 && compared.iter().any(|h| machine(h) != machine(&compared[0]));
    Ok((
        Hosts {
            facts,
            reports,
            compared: if compare { compared } else { Vec::new() },
        },
        series,
    ))
}

/// Is the remote host `name` this machine (a network namespace of it, where the load generator
/// runs too but is not in the host's samples)? Its hostname, kernel, CPUs and memory are this
/// machine's in every run.
fn same_machine(facts: &[HostFacts], name: &str) -> bool {
    let key = |h: &HostFacts| (h.hostname.clone(), h.kernel.clone(), h.cpus, (h.mem_total_mb / 64.0).round() as i64);
    let mut pairs = facts
        .iter()
        .filter(|h| h.name == name)
        .map(|h| (h, facts.iter().find(|l| l.run == h.run && l.name == LOCAL_HOST)))
        .peekable();
    pairs.peek().is_some() && pairs.all(|(h, l)| l.is_some_and(|l| !l.hostname.is_empty() && key(l) == key(h)))
}

/// The rules of `analysis::bottleneck` over one host's samples, each point's trials pooled; every
/// finding's `host` names it.
fn host_findings(host: &str, groups: &[(String, Vec<&Loaded>)], ctx: &Context) -> anyhow::Result<Vec<Finding>> {
    let mut out: Vec<Finding> = Vec::new();
    for (label, group) in groups {
        super::point_findings::merge(&mut out, super::point_findings::point_findings(host, label, group, false, ctx)?);
    }
    for f in &mut out {
        f.host = Some(host.to_string());
    }
    Ok(out)
}

/// Is `name` a row of a host's system table?
fn shown(name: &str) -> bool {
    key_system_metric(name) || matches!(name, "cpu_user_pct" | "cpu_system_pct" | "cpu_iowait_pct")
}

/// One remote host's table per point and the series of its charts (the middle trial of each point
/// with samples there, for the first `MAX_HOST_CHARTS` points); `first_chart` is the number of
/// the first chart file.
fn host_report(host: &str, groups: &[(String, Vec<&Loaded>)], first_chart: usize) -> anyhow::Result<(HostReport, Vec<Series>)> {
    let mut points = Vec::new();
    let mut series = Vec::new();
    for (label, group) in groups {
        let mut per_metric: BTreeMap<String, Vec<PhaseStats>> = BTreeMap::new();
        let mut sampled = Vec::new();
        for l in group {
            let summaries = l.store.phase_summaries_on(l.trial.id, host, &l.trial.phases)?;
            if !summaries.is_empty() {
                sampled.push(*l);
            }
            for s in summaries.into_iter().filter(|s| shown(&s.metric)) {
                per_metric.entry(s.metric.clone()).or_default().push(s);
            }
        }
        if sampled.is_empty() {
            continue;
        }
        let system = per_metric
            .iter()
            .map(|(metric, trials)| PhaseRow::pooled(metric, trials))
            .filter(|r| !idle_device(r))
            .collect();
        points.push(HostPoint {
            label: label.clone(),
            trials: sampled.len(),
            system,
        });
        if series.len() < MAX_HOST_CHARTS {
            let l = sampled[(sampled.len() - 1) / 2];
            series.push(trial_series(host, l, &l.store.samples_on(l.trial.id, host)?));
        }
    }
    let charts = (0..series.len()).map(|k| format!("trial_{:02}.svg", first_chart + k)).collect();
    Ok((
        HostReport {
            host: host.to_string(),
            points,
            charts,
        },
        series,
    ))
}

fn trial_series(host: &str, l: &Loaded, samples: &[crate::store::TaggedSample]) -> Series {
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for s in samples {
        for (k, v) in s.values.iter().filter(|(k, _)| key_system_metric(k)) {
            series.entry(k.clone()).or_default().push((s.t_s, *v));
        }
    }
    (
        format!("{host}: trial {} ({})", l.trial.id, l.point_label),
        l.trial.phases.clone(),
        series,
    )
}

/// The validity warnings of hosts whose clock offset is known to worse than a tenth of the
/// sampling interval: their samples may fall into the wrong phase near a boundary. The offsets
/// measured during the run decide, naming the trials; a run stored without them is judged by the
/// offset measured before it.
pub fn warnings(h: &Hosts) -> Vec<String> {
    let mut out = Vec::new();
    for f in h.facts.iter().filter(|f| f.interval_ms > 0.0) {
        let what = if f.clock_measurements > 0 {
            if f.uncertain_trials.is_empty() {
                continue;
            }
            let trials: Vec<String> = f.uncertain_trials.iter().map(|t| t.to_string()).collect();
            format!(
                "its clock offset was known to ± {:.3} ms only (the worst of {} measurements; in trial{} {})",
                f.worst_uncertainty_ms,
                f.clock_measurements,
                if trials.len() == 1 { "" } else { "s" },
                trials.join(", ")
            )
        } else if f.uncertainty_ms > f.interval_ms / 10.0 {
            format!("its clock offset is known to ± {:.3} ms only", f.uncertainty_ms)
        } else {
            continue;
        };
        out.push(safe(&format!(
            "host `{}` (run {}): {what}, more than a tenth of the sampling interval ({} ms): its samples may fall into the wrong phase near a boundary",
            f.name, f.run, f.interval_ms
        )));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_uncertain_offset_is_a_warning() {
        let mut f = HostFacts {
            name: "server".into(),
            run: "r1".into(),
            uncertainty_ms: 5.0,
            interval_ms: 100.0,
            ..HostFacts::default()
        };
        let mut h = Hosts {
            facts: vec![f.clone()],
            ..Hosts::default()
        };
        assert!(warnings(&h).is_empty(), "5 ms is a twentieth of 100 ms");
        f.uncertainty_ms = 12.0;
        h.facts = vec![f];
        let w = warnings(&h);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("`server`") && w[0].contains("12.000 ms"), "{w:?}");
    }

    #[test]
    fn the_offsets_measured_in_the_run_decide_and_name_their_trials() {
        let clock = |host: &str, off: f64, unc: f64| StoredClock {
            host: host.into(),
            offset_s: off,
            uncertainty_s: unc,
        };
        let clocks = vec![
            (0, clock("server", 0.010, 0.0001)),
            (0, clock("server", 0.012, 0.0001)),
            (1, clock("other", 9.0, 0.5)),
            (2, clock("server", 0.020, 0.015)),
            (3, clock("server", 0.011, 0.020)),
        ];
        let mut f = HostFacts {
            name: "server".into(),
            run: "r1".into(),
            // Before the run: uncertain, but the run's own measurements decide.
            uncertainty_ms: 50.0,
            interval_ms: 100.0,
            ..HostFacts::default()
        };
        add_clocks(&mut f, &clocks);
        assert_eq!(f.clock_measurements, 4);
        assert!(
            (f.offset_min_ms - 10.0).abs() < 1e-9 && (f.offset_max_ms - 20.0).abs() < 1e-9,
            "{f:?}"
        );
        assert!((f.worst_uncertainty_ms - 20.0).abs() < 1e-9);
        assert_eq!(f.uncertain_trials, vec![2, 3]);
        let w = warnings(&Hosts {
            facts: vec![f.clone()],
            ..Hosts::default()
        });
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("± 20.000 ms") && w[0].contains("in trials 2, 3"), "{w:?}");
        // Every measurement within a tenth of the interval: no warning, whatever came before.
        let mut calm = HostFacts {
            uncertain_trials: Vec::new(),
            worst_uncertainty_ms: 0.1,
            ..f
        };
        calm.clock_measurements = 2;
        assert!(warnings(&Hosts {
            facts: vec![calm],
            ..Hosts::default()
        })
        .is_empty());
    }
}
