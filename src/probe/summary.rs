//! Summaries of samples: counts by outcome, loss, the latency statistics of the replies, RFC 3550
//! interarrival jitter, reordering and the probes' own traffic.

use super::{Outcome, Sample};
use crate::analysis::percentiles::min_count;
use crate::analysis::stats::{mean, quantile_sorted, sample_sd};
use serde::Serialize;
use std::time::Duration;

/// Packets and payload bytes a probe sent and received. Packets are datagrams (icmp, udp) or TCP
/// segments (tcp, http: from the socket's TCP_INFO, the closing FIN/ACK exchange not included);
/// bytes are payload bytes (the ICMP message, the UDP payload, the TCP payload). A command's own
/// traffic is not counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Traffic {
    pub packets_out: u64,
    pub packets_in: u64,
    pub bytes_out: u64,
    pub bytes_in: u64,
}

impl std::ops::AddAssign for Traffic {
    fn add_assign(&mut self, o: Traffic) {
        self.packets_out += o.packets_out;
        self.packets_in += o.packets_in;
        self.bytes_out += o.bytes_out;
        self.bytes_in += o.bytes_in;
    }
}

/// Statistics of a set of times, in milliseconds. A percentile the count cannot support is None:
/// p90 needs 10 values, p99 needs 100 (as in reports); everything is None without values.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    pub count: u64,
    pub min_ms: Option<f64>,
    pub median_ms: Option<f64>,
    pub mean_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// Sample standard deviation (n - 1); None with fewer than 2 values.
    pub sd_ms: Option<f64>,
}

impl Stats {
    /// The statistics of `values` (ms), computed exactly from the values (sorted in place).
    pub fn of_ms(values: &mut [f64]) -> Stats {
        values.sort_by(|a, b| a.total_cmp(b));
        let n = values.len() as u64;
        let q = |q: f64| if n >= min_count(q) { quantile_sorted(values, q) } else { None };
        Stats {
            count: n,
            min_ms: values.first().copied(),
            median_ms: quantile_sorted(values, 0.5),
            mean_ms: mean(values),
            p90_ms: q(0.90),
            p99_ms: q(0.99),
            max_ms: values.last().copied(),
            sd_ms: sample_sd(values),
        }
    }
}

/// Statistics of one part of the time (http: dns, connect, tls, wait, transfer).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartStats {
    pub name: String,
    #[serde(flatten)]
    pub stats: Stats,
}

/// What a set of samples says.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Probes sent.
    pub n: u64,
    pub replies: u64,
    /// No answer within the timeout.
    pub timeouts: u64,
    /// Could not be made or refused.
    pub errors: u64,
    /// Answered with a failure (non-zero exit, HTTP status >= 400).
    pub failed: u64,
    /// (timeouts + errors) / n × 100; None when n = 0.
    pub loss_pct: Option<f64>,
    /// failed / n × 100; None when n = 0.
    pub failed_pct: Option<f64>,
    /// The round trips of the replies.
    pub rtt: Stats,
    /// RFC 3550 interarrival jitter of the replies in arrival order (J += (|D| - J) / 16, D the
    /// difference of two consecutive round trips); None with fewer than 2 replies.
    pub jitter_ms: Option<f64>,
    /// Replies that arrived after the reply to a later probe.
    pub reordered: u64,
    /// The parts of the replies' times, for kinds that time parts.
    pub parts: Vec<PartStats>,
    pub traffic: Traffic,
    /// The time the samples cover: from the first send to the last, plus one interval.
    pub span_s: f64,
    /// (packets out + in) / span_s.
    pub packets_per_s: f64,
    /// (bytes out + in) / span_s.
    pub bytes_per_s: f64,
}

impl Summary {
    /// The summary of `samples`; `part_names` name the samples' parts, `interval` is the probes'.
    pub fn of<'a>(samples: impl IntoIterator<Item = &'a Sample>, part_names: &[&str], interval: Duration) -> Summary {
        let mut s = Summary::default();
        let mut rtts = Vec::new();
        let mut arrivals: Vec<(f64, u64, f64)> = Vec::new();
        let mut parts: Vec<Vec<f64>> = vec![Vec::new(); part_names.len()];
        let (mut first, mut last) = (f64::INFINITY, f64::NEG_INFINITY);
        for x in samples {
            s.n += 1;
            s.traffic += x.traffic;
            first = first.min(x.t_s);
            last = last.max(x.t_s);
            match &x.outcome {
                Outcome::Reply { rtt } => {
                    s.replies += 1;
                    let ms = rtt.as_secs_f64() * 1e3;
                    rtts.push(ms);
                    arrivals.push((x.t_s + rtt.as_secs_f64(), x.seq, ms));
                    for (i, p) in x.parts.iter().enumerate().take(parts.len()) {
                        parts[i].push(p.as_secs_f64() * 1e3);
                    }
                }
                Outcome::Failed { .. } => s.failed += 1,
                Outcome::Timeout => s.timeouts += 1,
                Outcome::Error(_) => s.errors += 1,
            }
        }
        if s.n > 0 {
            s.loss_pct = Some(100.0 * (s.timeouts + s.errors) as f64 / s.n as f64);
            s.failed_pct = Some(100.0 * s.failed as f64 / s.n as f64);
            s.span_s = (last - first) + interval.as_secs_f64();
            s.packets_per_s = (s.traffic.packets_out + s.traffic.packets_in) as f64 / s.span_s;
            s.bytes_per_s = (s.traffic.bytes_out + s.traffic.bytes_in) as f64 / s.span_s;
        }
        s.rtt = Stats::of_ms(&mut rtts);
        arrivals.sort_by(|a, b| a.0.total_cmp(&b.0));
        s.jitter_ms = jitter(arrivals.iter().map(|a| a.2));
        let mut max_seq = None;
        for &(_, seq, _) in &arrivals {
            if max_seq.is_some_and(|m| seq < m) {
                s.reordered += 1;
            }
            max_seq = max_seq.max(Some(seq));
        }
        s.parts = part_names
            .iter()
            .zip(parts.iter_mut())
            .map(|(name, v)| PartStats {
                name: name.to_string(),
                stats: Stats::of_ms(v),
            })
            .collect();
        s
    }
}

/// RFC 3550 (6.4.1) interarrival jitter of transit times given in arrival order; None for fewer
/// than two.
pub fn jitter(transit_ms: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut prev: Option<f64> = None;
    let mut j: Option<f64> = None;
    for t in transit_ms {
        if let Some(p) = prev {
            let jj = j.unwrap_or(0.0);
            j = Some(jj + ((t - p).abs() - jj) / 16.0);
        }
        prev = Some(t);
    }
    j
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::PhaseTag;

    fn sample(seq: u64, t_s: f64, outcome: Outcome) -> Sample {
        Sample {
            seq,
            t_s,
            phase: PhaseTag::new("p"),
            outcome,
            parts: crate::probe::Parts::NONE,
            traffic: Traffic {
                packets_out: 1,
                packets_in: 1,
                bytes_out: 10,
                bytes_in: 10,
            },
        }
    }

    fn reply(ms: u64) -> Outcome {
        Outcome::Reply {
            rtt: Duration::from_millis(ms),
        }
    }

    #[test]
    fn counts_loss_and_exact_statistics() {
        let samples = vec![
            sample(0, 0.0, reply(10)),
            sample(1, 1.0, reply(20)),
            sample(2, 2.0, Outcome::Timeout),
            sample(3, 3.0, Outcome::Error("refused".into())),
            sample(
                4,
                4.0,
                Outcome::Failed {
                    rtt: Duration::from_millis(1),
                    status: 3,
                },
            ),
            sample(5, 5.0, reply(30)),
        ];
        let s = Summary::of(&samples, &[], Duration::from_secs(1));
        assert_eq!((s.n, s.replies, s.timeouts, s.errors, s.failed), (6, 3, 1, 1, 1));
        assert!((s.loss_pct.unwrap() - 100.0 * 2.0 / 6.0).abs() < 1e-9);
        assert_eq!(s.rtt.min_ms, Some(10.0));
        assert_eq!(s.rtt.median_ms, Some(20.0));
        assert_eq!(s.rtt.mean_ms, Some(20.0));
        assert_eq!(s.rtt.max_ms, Some(30.0));
        assert_eq!(s.rtt.sd_ms, Some(10.0));
        // Three values cannot support p90 or p99.
        assert_eq!((s.rtt.p90_ms, s.rtt.p99_ms), (None, None));
        assert_eq!(s.span_s, 6.0);
        assert_eq!(s.traffic.packets_out, 6);
        assert_eq!(s.packets_per_s, 2.0);
    }

    #[test]
    fn jitter_follows_rfc3550() {
        // Transits 10, 12, 11: J1 = 2/16, J2 = J1 + (1 - J1)/16.
        let j1 = 2.0 / 16.0;
        let want = j1 + (1.0 - j1) / 16.0;
        assert!((jitter([10.0, 12.0, 11.0]).unwrap() - want).abs() < 1e-12);
        assert_eq!(jitter([5.0]), None);
    }

    #[test]
    fn a_reply_overtaken_by_a_later_one_is_reordered() {
        // Probe 0 sent at 0 s answers at 0.5 s; probe 1 sent at 0.1 s answers at 0.2 s.
        let samples = vec![sample(0, 0.0, reply(500)), sample(1, 0.1, reply(100)), sample(2, 0.6, reply(10))];
        let s = Summary::of(&samples, &[], Duration::from_millis(100));
        assert_eq!(s.reordered, 1);
    }
}
