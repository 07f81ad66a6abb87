//! A host's clock offset, measured NTP-style over the agent channel: four timestamps per exchange
//! (controller sends at t0, agent receives at t1 and answers at t2, controller receives at t3); of
//! several exchanges the one with the smallest round trip wins.

use serde::{Deserialize, Serialize};

/// How far the host's clock is ahead of the controller's, and how sure that is.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Offset {
    /// Host time minus controller time, in seconds.
    pub offset_s: f64,
    /// ± this many seconds: half the round trip of the exchange the offset comes from.
    pub uncertainty_s: f64,
    /// The round trip minus the agent's own time between t1 and t2.
    pub rtt_s: f64,
}

impl Offset {
    /// The offset of one exchange.
    pub fn from_exchange(t0: f64, t1: f64, t2: f64, t3: f64) -> Offset {
        let rtt = ((t3 - t0) - (t2 - t1)).max(0.0);
        Offset {
            offset_s: ((t1 - t0) + (t2 - t3)) / 2.0,
            uncertainty_s: rtt / 2.0,
            rtt_s: rtt,
        }
    }

    /// The exchange with the smallest round trip of `all` (None when empty).
    pub fn best(all: impl IntoIterator<Item = Offset>) -> Option<Offset> {
        all.into_iter().min_by(|a, b| a.rtt_s.total_cmp(&b.rtt_s))
    }

    /// A time of the host's clock on the controller's timeline.
    pub fn to_controller(&self, host_time: f64) -> f64 {
        host_time - self.offset_s
    }
}

/// One measurement of a host's clock offset during a run: which host, when (this machine's unix
/// time, at the end of the measurement) and what came out. The runner measures each remote host it
/// talks to at the start and at the end of every trial and stores every measurement with the trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// The plan's name for the host.
    pub host: String,
    /// This machine's unix time when the measurement ended, seconds.
    pub at_unix_s: f64,
    pub offset_s: f64,
    pub uncertainty_s: f64,
    pub rtt_s: f64,
}

impl Measured {
    /// `o`, measured on `host` just now.
    pub fn now(host: &str, o: &Offset) -> Measured {
        Measured {
            host: host.to_string(),
            at_unix_s: crate::util::time::unix_now(),
            offset_s: o.offset_s,
            uncertainty_s: o.uncertainty_s,
            rtt_s: o.rtt_s,
        }
    }
}

/// The offset of one host at a time `host_time` of its clock, from that host's measurements `m`
/// (in the order they were made): linear between the two measurements around it (a clock that
/// drifts is followed), the nearest one before the first or after the last; 0 when there is none.
pub fn offset_at(m: &[Measured], host_time: f64) -> f64 {
    let Some(first) = m.first() else { return 0.0 };
    // Measurement times are this machine's; the sample's time is close enough to one once shifted.
    let t = host_time - first.offset_s;
    let after = m.iter().position(|x| x.at_unix_s >= t);
    match after {
        Some(0) => first.offset_s,
        None => m.last().map_or(0.0, |l| l.offset_s),
        Some(i) => {
            let (a, b) = (&m[i - 1], &m[i]);
            let span = b.at_unix_s - a.at_unix_s;
            if span <= 0.0 {
                return b.offset_s;
            }
            a.offset_s + (b.offset_s - a.offset_s) * (t - a.at_unix_s) / span
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symmetric_exchange_gives_the_offset_exactly() {
        // The host is 5 s ahead; 2 ms each way; the agent takes 1 ms to answer.
        let o = Offset::from_exchange(100.0, 105.002, 105.003, 100.005);
        assert!((o.offset_s - 5.0).abs() < 1e-9, "{o:?}");
        assert!((o.rtt_s - 0.004).abs() < 1e-9);
        assert!((o.uncertainty_s - 0.002).abs() < 1e-9);
        assert!((o.to_controller(105.0) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn an_asymmetric_exchange_stays_within_its_uncertainty() {
        // True offset -3 s; 1 ms out, 9 ms back.
        let o = Offset::from_exchange(10.0, 7.001, 7.001, 10.010);
        assert!((o.offset_s - -3.0).abs() <= o.uncertainty_s + 1e-12, "{o:?}");
    }

    #[test]
    fn the_smallest_round_trip_wins() {
        let slow = Offset::from_exchange(0.0, 1.05, 1.05, 0.2);
        let fast = Offset::from_exchange(0.0, 1.001, 1.001, 0.002);
        assert_eq!(Offset::best([slow, fast, slow]), Some(fast));
        assert_eq!(Offset::best([]), None);
    }

    #[test]
    fn an_offset_between_two_measurements_is_interpolated() {
        let m = |at: f64, off: f64| Measured {
            host: "h".into(),
            at_unix_s: at,
            offset_s: off,
            uncertainty_s: 0.001,
            rtt_s: 0.002,
        };
        let ms = [m(100.0, 1.0), m(110.0, 2.0)];
        assert_eq!(offset_at(&[], 5.0), 0.0);
        assert_eq!(offset_at(&ms[..1], 500.0), 1.0);
        // Host time 106 s is this machine's 105 s: half way.
        assert!((offset_at(&ms, 106.0) - 1.5).abs() < 1e-9);
        assert_eq!(offset_at(&ms, 50.0), 1.0, "before the first: the first");
        assert_eq!(offset_at(&ms, 200.0), 2.0, "after the last: the last");
    }
}
