//! What one probe produced: its samples, the counts the samples cannot hold (skipped slots, late
//! and duplicate replies), summaries overall and per phase, HDR histograms, and its JSON.

use super::summary::Summary;
use super::{Outcome, PhaseTag, ProbeSpec, Sample};
use crate::model::latency_histogram;
use hdrhistogram::Histogram;
use serde::ser::SerializeMap;
use serde::Serialize;
use std::time::Duration;

/// The result of one probe of a [`super::ProbeSet`].
#[derive(Clone, Debug)]
pub struct ProbeResult {
    pub spec: ProbeSpec,
    /// How it measured, e.g. `raw socket`, `datagram socket`, `connect to 127.0.0.1:8080`.
    pub detail: String,
    /// The names of the samples' parts (http: dns, connect, tls, wait, transfer); empty otherwise.
    pub part_names: &'static [&'static str],
    /// Wall clock of the start (seconds since the epoch); samples' `t_s` count from it.
    pub started_unix_s: f64,
    /// From the start to the last outcome.
    pub elapsed: Duration,
    /// Every probe sent, in send order (`samples[i].seq == i`).
    pub samples: Vec<Sample>,
    /// Send slots missed by more than a whole interval (a probe still running, a late thread):
    /// skipped, never sent in a burst, and not in the samples.
    pub skipped: u64,
    /// Replies that came after their probe's timeout (the probe stays a loss).
    pub late: u64,
    /// Second and later replies to one probe.
    pub duplicates: u64,
    /// Datagrams on the probe's socket that were not replies to it.
    pub stray: u64,
    /// Why the probe ended early, if it did.
    pub failure: Option<String>,
}

impl ProbeResult {
    pub(crate) fn failed(spec: ProbeSpec, why: &str) -> ProbeResult {
        ProbeResult {
            spec,
            detail: String::new(),
            part_names: &[],
            started_unix_s: crate::util::time::unix_now(),
            elapsed: Duration::ZERO,
            samples: Vec::new(),
            skipped: 0,
            late: 0,
            duplicates: 0,
            stray: 0,
            failure: Some(why.to_string()),
        }
    }

    /// The summary of every sample.
    pub fn summary(&self) -> Summary {
        Summary::of(&self.samples, self.part_names, self.spec.interval)
    }

    /// The phases of the samples, in order of first appearance.
    pub fn phases(&self) -> Vec<PhaseTag> {
        let mut out: Vec<PhaseTag> = Vec::new();
        for s in &self.samples {
            if out.last() != Some(&s.phase) && !out.contains(&s.phase) {
                out.push(s.phase.clone());
            }
        }
        out
    }

    /// The summary of the samples sent in `phase`.
    pub fn summary_of(&self, phase: &PhaseTag) -> Summary {
        Summary::of(
            self.samples.iter().filter(|s| &s.phase == phase),
            self.part_names,
            self.spec.interval,
        )
    }

    /// One summary per phase, in order of first appearance.
    pub fn by_phase(&self) -> Vec<(PhaseTag, Summary)> {
        self.phases().into_iter().map(|p| (p.clone(), self.summary_of(&p))).collect()
    }

    /// The replies' round trips (µs) in perflab's latency histogram, of one phase or of all.
    pub fn histogram(&self, phase: Option<&PhaseTag>) -> Histogram<u64> {
        let mut h = latency_histogram();
        for s in self.samples.iter().filter(|s| phase.is_none_or(|p| &s.phase == p)) {
            if let Some(rtt) = s.outcome.rtt() {
                h.saturating_record((rtt.as_micros() as u64).max(1));
            }
        }
        h
    }

    /// The `perflab probe --json` document (schema `perflab.probe/1`, docs/probes.md), pretty-printed.
    pub fn json(&self, interrupted: bool) -> String {
        let ms = |d: &Duration| d.as_secs_f64() * 1e3;
        let samples: Vec<JsonSample> = self
            .samples
            .iter()
            .map(|s| {
                let (rtt_ms, status, error) = match &s.outcome {
                    Outcome::Reply { rtt } => (Some(ms(rtt)), None, None),
                    Outcome::Failed { rtt, status } => (Some(ms(rtt)), Some(*status), None),
                    Outcome::Error(e) => (None, None, Some(e.as_str())),
                    Outcome::Timeout => (None, None, None),
                };
                let parts_ms = (!s.parts.is_empty()).then(|| {
                    Ordered(
                        self.part_names
                            .iter()
                            .zip(s.parts.iter())
                            .map(|(n, d)| (n.to_string(), ms(&d)))
                            .collect(),
                    )
                });
                JsonSample {
                    seq: s.seq,
                    t_s: s.t_s,
                    phase: s.phase.as_str(),
                    outcome: s.outcome.name(),
                    rtt_ms,
                    status,
                    error,
                    parts_ms,
                }
            })
            .collect();
        let doc = JsonDoc {
            schema: "perflab.probe/1",
            kind: self.spec.kind.name(),
            target: self.spec.target.to_string(),
            detail: &self.detail,
            interval_ms: ms(&self.spec.interval),
            timeout_ms: ms(&self.spec.timeout),
            started_unix_s: self.started_unix_s,
            elapsed_s: self.elapsed.as_secs_f64(),
            interrupted,
            summary: self.summary(),
            by_phase: Ordered(self.by_phase().into_iter().map(|(p, s)| (p.to_string(), s)).collect()),
            skipped: self.skipped,
            late: self.late,
            duplicates: self.duplicates,
            stray: self.stray,
            failure: self.failure.as_deref(),
            samples,
        };
        serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}

/// The `--json` document, its fields in this order.
#[derive(Serialize)]
struct JsonDoc<'a> {
    schema: &'static str,
    kind: &'static str,
    target: String,
    detail: &'a str,
    interval_ms: f64,
    timeout_ms: f64,
    started_unix_s: f64,
    elapsed_s: f64,
    interrupted: bool,
    summary: Summary,
    by_phase: Ordered<Summary>,
    skipped: u64,
    late: u64,
    duplicates: u64,
    stray: u64,
    failure: Option<&'a str>,
    samples: Vec<JsonSample<'a>>,
}

#[derive(Serialize)]
struct JsonSample<'a> {
    seq: u64,
    t_s: f64,
    phase: &'a str,
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    rtt_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parts_ms: Option<Ordered<f64>>,
}

/// Pairs written as a JSON object, in their order.
struct Ordered<V>(Vec<(String, V)>);

impl<V: Serialize> Serialize for Ordered<V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}
