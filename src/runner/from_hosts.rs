//! `[workload] from = ["local", "client1", ...]`: every trial's load split into one segment per
//! machine named (segment `i` on `from[i]`, the slices of `--segment i/N`), begun together at a
//! common start chosen per trial (a short margin ahead, each host's start corrected by its
//! agent's measured clock offset), and merged as `perflab merge` merges a split run's trials
//! (`merge_figures`): the trial stored is the whole load's. Each segment's own figures and how
//! late it began are kept as the trial's raw lines. A segment that began too late, whose agent
//! was lost or whose load failed fails the trial with one line naming its host; Ctrl-C stops
//! every segment (closing a channel stops what its agent runs). What the segments share (the
//! `oltp` tables) segment 0's machine does once, before the common start is set and after every
//! segment ended (`from_shared`).

use super::from_shared::{NoFile, Step};
use super::merge_figures::{merge_trial, number_globally};
use crate::model::{MetricKind, NamedHistogram, Phase, PhaseSpan, Segment, TrialInfo, WorkloadResult};
use crate::plan::HostSpec;
use crate::remote::protocol::{decode_histogram, LoadgenSeconds, Request, SegmentDone};
use crate::remote::{Channel, Offset};
use crate::store::StoredTrial;
use crate::util::time::unix_now;
use crate::util::Cancel;
use crate::workload::{Primary, Produces, RunSpec, SetupCtx, Shared, Unmet, Workload};
use std::time::Duration;

/// How far ahead of the moment every host is reached the common start is set.
pub const MARGIN: Duration = Duration::from_millis(300);

/// A segment that begins later than this after the common start runs nothing and fails the trial.
pub const TOLERANCE: Duration = Duration::from_millis(500);

/// How a trial's line names a segment's machine.
fn machine(h: &Option<HostSpec>) -> &str {
    h.as_ref().map_or(crate::model::LOCAL_HOST, |h| h.name.as_str())
}

/// One trial's load over the machines of `from`.
pub struct FromHosts {
    /// The whole load (its name, headline figures and metrics); its slice runs here when this
    /// machine is one of `from`.
    whole: Box<dyn Workload>,
    /// `from`, in segment order (None: this machine).
    from: Vec<Option<HostSpec>>,
    kind: String,
    /// The trial's `[workload]` as substituted, without `from`, for the agents to build theirs.
    table: toml::Table,
    /// `file:line:col` of `from`, for `--segment`'s refusal.
    at: String,
    /// What the segments share, done once by segment 0's machine.
    shared: Shared,
    /// This trial's lines of the shared work (who prepared, in how long), for its raw lines.
    said: Vec<String>,
}

impl FromHosts {
    /// `whole` split over `from`; this machine's slice taken now (a load that cannot be split,
    /// or has too little for every machine, is refused here, at the key).
    pub fn new(
        whole: Box<dyn Workload>,
        from: Vec<Option<HostSpec>>,
        kind: &str,
        table: toml::Table,
        at: String,
    ) -> Result<FromHosts, String> {
        let shared = whole.shared();
        let mut w = FromHosts {
            whole,
            from,
            kind: kind.to_string(),
            table,
            at,
            shared,
            said: Vec::new(),
        };
        let count = w.from.len() as u32;
        // Every slice must be possible: a trial's load too small for its machines is a plan error.
        for i in 0..count {
            let mut probe = crate::workload::registry::build(&w.kind, &w.table, &NoFile).map_err(|e| crate::error::one_line(&e))?;
            probe.segment_shared(Segment::new(i, count)?)?;
        }
        if let Some(i) = w.from.iter().position(Option::is_none) {
            w.whole.segment_shared(Segment::new(i as u32, count)?)?;
        }
        Ok(w)
    }

    fn count(&self) -> u32 {
        self.from.len() as u32
    }
}

/// One segment's outcome, on this machine's clock.
struct Part {
    segment: Segment,
    host: String,
    late_s: f64,
    started_unix: f64,
    load_start_s: Option<f64>,
    ended_unix: f64,
    result: WorkloadResult,
    /// A remote segment's load generator, each second of its load (this machine's is sampled by
    /// the run's monitor and judged in the report).
    loadgen: Option<LoadgenSeconds>,
}

impl Part {
    fn stored(&self) -> StoredTrial {
        let mut info = TrialInfo {
            started_unix: self.started_unix,
            ended_unix: self.ended_unix,
            ..TrialInfo::default()
        };
        if let Some(l) = self.load_start_s {
            info.phases = vec![PhaseSpan::new(Phase::Load, l, (self.ended_unix - self.started_unix).max(l))];
        }
        let mut t = StoredTrial {
            info,
            metrics: self.result.metrics.clone(),
            histograms: self.result.histograms.clone(),
            series: self.result.series.clone(),
            errors: self.result.errors.clone(),
        };
        number_globally(&mut t, self.segment);
        t
    }

    /// "segment 1/2 on client1: its own load generator saturated at ... : the merged load is
    /// not the plan's" when rule R12 fires on its seconds, as `perflab merge` refuses such a segment.
    fn saturated(&self) -> Option<String> {
        let l = self.loadgen.as_ref()?;
        let ctx = crate::analysis::bottleneck::Context::of(l.cpus.max(1));
        let mut read = |_: usize, _: &dyn Fn(&str) -> bool, t: &mut crate::analysis::table::SampleTable| {
            for (k, (cpu, threads)) in l.seconds.iter().enumerate() {
                let values = [("proc_loadgen_cpu_pct", *cpu), ("proc_loadgen_threads", *threads)];
                t.push_row(k as f64 + 0.5, crate::analysis::phases::LOAD, values);
            }
            Ok(())
        };
        let label = format!("segment {}", self.segment);
        let at = crate::analysis::bottleneck::load_generator_saturated(&label, 1, &ctx, &mut read).ok()?;
        let first = at.first()?;
        Some(format!(
            "segment {} on {}: its own load generator saturated {}: it sent less than its share, late, so the merged load is not the plan's",
            self.segment,
            self.host,
            first.trim_start_matches(&format!("at {label} "))
        ))
    }

    /// `segment 1/3 on client1: began 0.002 s after the trial's start; requests 334, errors 0`.
    fn line(&self) -> String {
        let counts: Vec<String> = self
            .result
            .metrics
            .iter()
            .filter(|m| m.kind == MetricKind::Count)
            .take(4)
            .map(|m| format!("{} {}", m.name, m.value))
            .collect();
        format!(
            "segment {} on {}: began {:.4} s after the trial's start; {}",
            self.segment,
            self.host,
            self.late_s,
            counts.join(", ")
        )
    }
}

/// Reach every remote machine of `from` at once: its channel and clock offset.
fn reach(remotes: &[(Segment, HostSpec)]) -> Vec<anyhow::Result<(Channel, Offset)>> {
    std::thread::scope(|s| {
        let all: Vec<_> = remotes
            .iter()
            .map(|(_, h)| {
                s.spawn(move || {
                    let mut ch = crate::remote::open(h)?;
                    let o = ch.clock(crate::remote::CLOCK_EXCHANGES)?;
                    Ok((ch, o))
                })
            })
            .collect();
        all.into_iter()
            .map(|j| {
                j.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("the thread reaching a host failed")))
            })
            .collect()
    })
}

/// A remote segment's answer on this machine's clock.
fn remote_part(segment: Segment, host: &str, offset: f64, d: SegmentDone) -> anyhow::Result<Part> {
    let histograms = d
        .histograms
        .iter()
        .map(|(name, text)| {
            Ok(NamedHistogram {
                name: name.clone(),
                hist: decode_histogram(text).map_err(|e| anyhow::anyhow!("host `{host}`: {e}"))?,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Part {
        segment,
        host: host.to_string(),
        late_s: d.late_s,
        started_unix: d.started_unix - offset,
        load_start_s: d.load_start_s,
        ended_unix: d.ended_unix - offset,
        loadgen: d.loadgen,
        result: WorkloadResult {
            metrics: d.metrics,
            histograms,
            series: d.series,
            errors: d.errors,
            raw: d.raw,
            failure: d.failure,
        },
    })
}

/// Sleep until `t` (Unix seconds, this machine), in steps that see `cancel`; false when cancelled.
fn sleep_until(t: f64, cancel: &Cancel) -> bool {
    loop {
        if cancel.is_cancelled() {
            return false;
        }
        let left = t - unix_now();
        if left <= 0.0 {
            return true;
        }
        std::thread::sleep(Duration::from_secs_f64(left.min(0.05)));
    }
}

impl FromHosts {
    /// This machine's slice, begun at `t0`.
    fn run_here(
        &mut self,
        i: usize,
        t0: f64,
        spec: RunSpec,
        cancel: &Cancel,
        on_load_start: &mut dyn FnMut(),
    ) -> anyhow::Result<Option<Part>> {
        let segment = Segment::new(i as u32, self.count()).map_err(|e| anyhow::anyhow!(e))?;
        if !sleep_until(t0, cancel) {
            return Ok(None);
        }
        let started = unix_now();
        let late = started - t0;
        if late > TOLERANCE.as_secs_f64() {
            anyhow::bail!(
                "segment {segment} on local began {late:.3} s after the trial's common start, more than the {:.3} s allowed",
                TOLERANCE.as_secs_f64()
            );
        }
        let mut load_at = None;
        let result = self.whole.run(spec, cancel, &mut || {
            load_at = Some(unix_now() - started);
            on_load_start();
        })?;
        Ok(Some(Part {
            segment,
            host: crate::model::LOCAL_HOST.into(),
            late_s: late,
            started_unix: started,
            load_start_s: load_at,
            ended_unix: unix_now(),
            result,
            loadgen: None,
        }))
    }

    /// Each remote segment asked to begin at `t0` (its host's clock: `t0` + its offset), on a
    /// thread of its own, answered when its load ends (or its channel is lost, or `cancel`).
    fn ask_remotes(
        &self,
        reached: Vec<(Segment, String, Channel, Offset)>,
        t0: f64,
        spec: RunSpec,
        cancel: &Cancel,
    ) -> Vec<std::thread::JoinHandle<anyhow::Result<Part>>> {
        let table = toml::to_string(&self.table).unwrap_or_default();
        reached
            .into_iter()
            .map(|(segment, host, mut ch, o)| {
                let req = Request::Segment {
                    kind: self.kind.clone(),
                    table: table.clone(),
                    index: segment.index,
                    count: segment.count,
                    start_at_unix: t0 + o.offset_s,
                    tolerance_s: TOLERANCE.as_secs_f64(),
                    warmup_s: spec.warmup.as_secs_f64(),
                    load_s: spec.load.as_secs_f64(),
                    shared: true,
                };
                let cancel = cancel.clone();
                // A load of `requests` may outlast its phases: its agent's end, not a clock, ends the wait.
                let wait = spec.warmup + spec.load + Duration::from_secs(24 * 3600);
                std::thread::spawn(move || {
                    let v = ch.call_until_value(req, wait, &|| cancel.is_cancelled());
                    let part = v.and_then(|v| {
                        let d: SegmentDone = serde_json::from_value(v)
                            .map_err(|e| anyhow::anyhow!("host `{host}`: the agent's answer is not understood: {e}"))?;
                        remote_part(segment, &host, o.offset_s, d)
                    });
                    if part.is_ok() {
                        let _ = ch.close();
                    }
                    part
                })
            })
            .collect()
    }

    /// The segments' results merged into the trial's, with a line per segment, the launch skew
    /// and the lines of the shared work (`shared`); the first failure, named by its segment and
    /// host, fails the trial.
    fn merged(parts: &[Part], failures: Vec<String>, shared: &[String]) -> WorkloadResult {
        let stored: Vec<StoredTrial> = parts.iter().map(Part::stored).collect();
        let refs: Vec<&StoredTrial> = stored.iter().collect();
        let figures = merge_trial(&refs);
        let mut raw: Vec<String> = parts.iter().map(Part::line).collect();
        let lates = parts.iter().map(|p| p.late_s);
        let (lo, hi) = lates
            .clone()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), l| (a.min(l), b.max(l)));
        if parts.len() > 1 {
            raw.push(format!(
                "launch skew: the segments began within {:.2} ms of each other",
                (hi - lo) * 1000.0
            ));
        }
        raw.extend(shared.iter().cloned());
        if !figures.left_out.is_empty() {
            raw.push(format!(
                "left out of the merge (no exact sum of the segments' figures): {}",
                figures.left_out.join(", ")
            ));
        }
        // Each segment's own lines (its workload's summary, as its command prints it: its own
        // percentiles among them), under a line naming it.
        for p in parts.iter().filter(|p| !p.result.raw.is_empty()) {
            raw.push(format!("segment {} on {}, its own output:", p.segment, p.host));
            raw.extend(p.result.raw.iter().cloned());
        }
        let failure = failures
            .into_iter()
            .chain(parts.iter().filter_map(|p| {
                let f = p.result.failure.as_ref()?;
                Some(format!("segment {} on {}: {f}", p.segment, p.host))
            }))
            .chain(parts.iter().filter_map(Part::saturated))
            .next();
        WorkloadResult {
            metrics: figures.metrics,
            histograms: figures.histograms,
            series: figures.series,
            errors: figures.errors,
            raw,
            failure,
        }
    }
}

impl Workload for FromHosts {
    fn name(&self) -> String {
        self.whole.name()
    }

    fn facts(&self) -> Option<String> {
        let names: Vec<&str> = self.from.iter().map(machine).collect();
        let split = format!("split into {} segments from {}", names.len(), names.join(", "));
        Some(match self.whole.facts() {
            Some(f) => format!("{split} (this machine's: {f})"),
            None => split,
        })
    }

    fn primary(&self) -> Primary {
        self.whole.primary()
    }

    fn metrics(&self) -> Produces {
        self.whole.metrics()
    }

    fn preflight(&self) -> Result<(), Unmet> {
        self.whole.preflight()
    }

    /// The shared work first (by segment 0's machine, before `run` sets the common start), then
    /// this machine's slice's own.
    fn setup(&mut self, ctx: &SetupCtx, cancel: &Cancel) -> anyhow::Result<()> {
        self.said.clear();
        if self.shared.prepare {
            let line = super::from_shared::by(Step::Prepare, self.from[0].as_ref(), &self.kind, &self.table, ctx, cancel)?;
            self.said.push(line);
        }
        self.whole.setup(ctx, cancel)
    }

    fn segment(&mut self, segment: Segment) -> Result<(), String> {
        Err(format!(
            "{}: [workload] from already splits the load over its machines: run the plan without --segment {segment}",
            self.at
        ))
    }

    fn run(&mut self, spec: RunSpec, cancel: &Cancel, on_load_start: &mut dyn FnMut()) -> anyhow::Result<WorkloadResult> {
        let count = self.count();
        let remotes: Vec<(Segment, HostSpec)> = self
            .from
            .iter()
            .enumerate()
            .filter_map(|(i, h)| Some((Segment::new(i as u32, count).ok()?, h.clone()?)))
            .collect();
        let mut reached = Vec::new();
        for ((segment, h), r) in remotes.iter().zip(reach(&remotes)) {
            let (ch, o) = r.map_err(|e| anyhow::anyhow!("segment {segment} on {}: {}", h.name, crate::error::one_line(&e)))?;
            reached.push((*segment, h.name.clone(), ch, o));
        }
        let t0 = unix_now() + MARGIN.as_secs_f64();
        let asked = self.ask_remotes(reached, t0, spec, cancel);
        let mut parts = Vec::new();
        let mut failures = Vec::new();
        match self.from.iter().position(Option::is_none) {
            Some(i) => match self.run_here(i, t0, spec, cancel, on_load_start) {
                Ok(Some(p)) => parts.push(p),
                Ok(None) => {}
                Err(e) => failures.push(crate::error::one_line(&e)),
            },
            // No slice here: the load phase begins on the common schedule.
            None => {
                if sleep_until(t0 + spec.warmup.as_secs_f64(), cancel) {
                    on_load_start();
                }
            }
        }
        for (j, (segment, h)) in asked.into_iter().zip(&remotes) {
            match j.join() {
                Ok(Ok(p)) => parts.push(p),
                Ok(Err(e)) => failures.push(format!("segment {segment} on {}: {}", h.name, crate::error::one_line(&e))),
                Err(_) => failures.push(format!("segment {segment} on {}: its thread failed", h.name)),
            }
        }
        parts.sort_by_key(|p| p.segment.index);
        if cancel.is_cancelled() && failures.is_empty() {
            failures.push("interrupted".into());
        }
        // Every segment ended: the shared work's end, once (not after a Ctrl-C, as a load's own).
        let mut said = std::mem::take(&mut self.said);
        let mut cleanup = None;
        if self.shared.cleanup && !cancel.is_cancelled() {
            let ctx = SetupCtx::default();
            match super::from_shared::by(Step::Cleanup, self.from[0].as_ref(), &self.kind, &self.table, &ctx, cancel) {
                Ok(line) => said.push(line),
                Err(e) => cleanup = Some(crate::error::one_line(&e)),
            }
        }
        let mut merged = FromHosts::merged(&parts, failures, &said);
        if let Some(e) = cleanup {
            merged.failure.get_or_insert(e);
        }
        Ok(merged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A remote segment 1/2 whose agent (2 threads, 2 CPUs) used `cpu` % each of 6 seconds.
    fn part(cpu: f64) -> Part {
        Part {
            segment: Segment::new(1, 2).unwrap(),
            host: "client1".into(),
            late_s: 0.001,
            started_unix: 1_700_000_000.0,
            load_start_s: Some(0.0),
            ended_unix: 1_700_000_006.0,
            result: WorkloadResult::default(),
            loadgen: Some(LoadgenSeconds {
                cpus: 2,
                seconds: vec![(cpu, 2.0); 6],
            }),
        }
    }

    #[test]
    fn a_remote_segment_whose_load_generator_saturated_fails_the_trial_naming_it() {
        let said = part(196.0).saturated().expect("196 % of 2 cores is saturated (R12: 90 % of them)");
        assert_eq!(
            said,
            "segment 1/2 on client1: its own load generator saturated (its CPU 196 % in the load phase, the limit 180 %): \
             it sent less than its share, late, so the merged load is not the plan's"
        );
        assert_eq!(part(120.0).saturated(), None, "120 % of 2 cores is not saturated");
        let merged = FromHosts::merged(&[part(196.0)], vec![], &[]);
        assert_eq!(merged.failure.as_deref(), Some(said.as_str()));
        assert!(FromHosts::merged(&[part(120.0)], vec![], &[]).failure.is_none());
    }
}
