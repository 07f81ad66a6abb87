//! The remote hosts sampled during a trial (`[monitor] hosts`): each host's system metrics (and, on
//! the target's host, the target's process tree) placed on this machine's timeline with the host's
//! clock offset, tagged with the phase their time falls in, and kept per host for the store
//! (`Store::write_host_samples`).
//!
//! The target's host is sampled by the target's own channel (`RemoteTarget::begin_sampling`); every
//! other monitored host gets a channel of its own for the trial, opened before the baseline (the
//! clock offset measured again there) and closed after the recovery.

use super::remote_target::{clock_warning, HostTap, RemoteSample};
use crate::model::PhaseSpan;
use crate::plan::{HostSpec, MonitorHosts};
use crate::remote::protocol::{Event, Request};
use crate::remote::{clock, Channel, Measured};
use crate::store::TaggedSample;
use std::time::Duration;

/// How long an ordinary request to the agent may take.
const CALL: Duration = Duration::from_secs(30);

/// One trial's samples taken on one remote host, on this machine's timeline.
#[derive(Clone, Debug)]
pub struct HostSamples {
    /// The plan's name for the host.
    pub host: String,
    pub samples: Vec<TaggedSample>,
    /// The host's clock offset as measured in the trial (stored with it, `Store::write_clocks`).
    pub clocks: Vec<Measured>,
}

/// The channels sampling the monitored hosts other than the target's.
#[derive(Default)]
pub struct HostMonitors {
    chans: Vec<(Channel, Vec<Measured>)>,
}

/// The hosts to sample besides the target's: those of `[monitor] hosts` (all of `[hosts]` by
/// default) except `target_host`.
pub fn others<'a>(hosts: &'a [HostSpec], monitored: &MonitorHosts, target_host: Option<&str>) -> Vec<&'a HostSpec> {
    hosts
        .iter()
        .filter(|h| monitored.includes(&h.name) && Some(h.name.as_str()) != target_host)
        .collect()
}

impl HostMonitors {
    /// Open a channel to each host, measure its clock offset and have it sample its system every
    /// `interval`. Returns the warnings of offsets too uncertain for that interval; the first host
    /// that cannot be reached is the error (the channels opened so far are closed).
    pub fn start(hosts: &[&HostSpec], interval: Duration) -> anyhow::Result<(HostMonitors, Vec<String>)> {
        let mut out = HostMonitors::default();
        let mut warnings = Vec::new();
        for h in hosts {
            let mut ch = crate::remote::open(h)?;
            let o = ch.clock(crate::remote::CLOCK_EXCHANGES)?;
            ch.call::<serde_json::Value>(
                Request::Sample {
                    interval_s: interval.as_secs_f64().max(0.01),
                    // The trial's shared grid, on the host's clock.
                    first_tick_unix_s: Some(crate::monitor::grid_tick(crate::util::time::unix_now(), interval) + o.offset_s),
                    targets: Vec::new(),
                    pids: Vec::new(),
                },
                CALL,
            )
            .map_err(|e| anyhow::anyhow!("host `{}`: cannot start sampling: {}", h.name, crate::error::one_line(&e)))?;
            warnings.extend(clock_warning(&h.name, &o, interval));
            out.chans.push((ch, vec![Measured::now(&h.name, &o)]));
        }
        Ok((out, warnings))
    }

    /// A live tap on each host's samples.
    pub fn taps(&self, monitored: &MonitorHosts) -> Vec<HostTap> {
        self.chans.iter().map(|(ch, m)| HostTap::new(ch, m, None, monitored)).collect()
    }

    /// Measure each host's clock offset once more, stop sampling, close the channels and return
    /// every host's samples (this machine's time: each placed with the offset of its time between
    /// the trial's measurements) and the measurements. A channel lost during the trial gives the
    /// samples it received before.
    pub fn stop(self) -> (Vec<RemoteSample>, Vec<Measured>) {
        let mut out = Vec::new();
        let mut clocks = Vec::new();
        for (mut ch, mut measured) in self.chans {
            let alive = ch.lost().is_none();
            if alive {
                if let Ok(o) = ch.clock(crate::remote::CLOCK_EXCHANGES) {
                    measured.push(Measured::now(&ch.host, &o));
                }
                let _ = ch.call::<serde_json::Value>(Request::SampleStop, CALL);
            }
            while let Ok(e) = ch.events().try_recv() {
                if let Event::Sample { unix_s, values, .. } = e {
                    out.push(RemoteSample {
                        host: ch.host.clone(),
                        unix_s: unix_s - clock::offset_at(&measured, unix_s),
                        values,
                    });
                }
            }
            if alive {
                let _ = ch.close();
            }
            clocks.extend(measured);
        }
        (out, clocks)
    }
}

/// Place remote samples on a trial's timeline (`started_unix`, `phases`): each gets the phase its
/// time falls in (a sample outside every phase is dropped), grouped per host in the order the hosts
/// first appear, each with its clock measurements `clocks` (a host measured but without samples
/// still gets its entry). A host not in `monitored` keeps only the target's process tree
/// (`proc_target_*`).
pub fn place(
    started_unix: f64,
    phases: &[PhaseSpan],
    remote: Vec<RemoteSample>,
    clocks: Vec<Measured>,
    monitored: &MonitorHosts,
) -> Vec<HostSamples> {
    let mut out: Vec<HostSamples> = Vec::new();
    fn entry(out: &mut Vec<HostSamples>, host: &str) -> usize {
        match out.iter().position(|h| h.host == host) {
            Some(i) => i,
            None => {
                out.push(HostSamples {
                    host: host.to_string(),
                    samples: Vec::new(),
                    clocks: Vec::new(),
                });
                out.len() - 1
            }
        }
    }
    for s in remote {
        let t_s = s.unix_s - started_unix;
        let Some(span) = phases.iter().find(|p| p.start_s <= t_s && t_s < p.end_s) else {
            continue;
        };
        let values: Vec<(String, f64)> = if monitored.includes(&s.host) {
            s.values
        } else {
            s.values.into_iter().filter(|(k, _)| k.starts_with("proc_target_")).collect()
        };
        if values.is_empty() {
            continue;
        }
        let i = entry(&mut out, &s.host);
        out[i].samples.push(TaggedSample {
            phase: span.name().to_string(),
            t_s,
            unix_s: s.unix_s,
            values,
        });
    }
    for m in clocks {
        let i = entry(&mut out, &m.host);
        out[i].clocks.push(m);
    }
    for h in &mut out {
        h.samples.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Phase;

    fn sample(host: &str, unix_s: f64, values: &[(&str, f64)]) -> RemoteSample {
        RemoteSample {
            host: host.into(),
            unix_s,
            values: values.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }
    }

    #[test]
    fn samples_go_to_their_host_and_phase() {
        let phases = vec![PhaseSpan::new(Phase::Baseline, 0.0, 1.0), PhaseSpan::new(Phase::Load, 1.0, 3.0)];
        let monitored = MonitorHosts {
            local: true,
            remote: vec!["server".into()],
        };
        let placed = place(
            100.0,
            &phases,
            vec![
                sample("server", 102.5, &[("cpu_busy_pct", 90.0), ("proc_target_cpu_pct", 80.0)]),
                sample("server", 100.5, &[("cpu_busy_pct", 5.0)]),
                // Outside every phase: dropped.
                sample("server", 104.0, &[("cpu_busy_pct", 1.0)]),
                // Not monitored: only the target's tree is kept.
                sample("db", 101.5, &[("cpu_busy_pct", 50.0), ("proc_target_cpu_pct", 40.0)]),
                sample("db", 101.6, &[("cpu_busy_pct", 50.0)]),
            ],
            vec![
                Measured {
                    host: "server".into(),
                    at_unix_s: 100.0,
                    offset_s: 0.25,
                    uncertainty_s: 0.001,
                    rtt_s: 0.002,
                },
                // Measured, never sampled: still its own entry, for the store.
                Measured {
                    host: "idle".into(),
                    at_unix_s: 100.0,
                    offset_s: -1.0,
                    uncertainty_s: 0.001,
                    rtt_s: 0.002,
                },
            ],
            &monitored,
        );
        assert_eq!(placed.len(), 3);
        assert_eq!(placed[0].host, "server");
        assert_eq!(placed[0].clocks.len(), 1);
        assert_eq!(
            (placed[2].host.as_str(), placed[2].samples.len(), placed[2].clocks.len()),
            ("idle", 0, 1)
        );
        let s = &placed[0].samples;
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].phase.as_str(), s[0].t_s), ("baseline", 0.5));
        assert_eq!((s[1].phase.as_str(), s[1].t_s), ("load", 2.5));
        assert_eq!(s[1].values.len(), 2);
        assert_eq!(placed[1].host, "db");
        assert_eq!(placed[1].samples.len(), 1);
        assert_eq!(placed[1].samples[0].values, vec![("proc_target_cpu_pct".to_string(), 40.0)]);
    }

    #[test]
    fn the_target_host_is_not_sampled_twice() {
        let h = |n: &str| HostSpec {
            name: n.into(),
            ssh: "x".into(),
            port: None,
            identity: None,
            ssh_options: Vec::new(),
            perflab: None,
        };
        let hosts = vec![h("server"), h("db"), h("idle")];
        let monitored = MonitorHosts {
            local: false,
            remote: vec!["server".into(), "db".into()],
        };
        let names: Vec<&str> = others(&hosts, &monitored, Some("server")).iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["db"]);
    }
}
