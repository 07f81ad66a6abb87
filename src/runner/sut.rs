//! The system under test wherever it runs: on this machine ([`RunningTarget`]) or on a remote host
//! through its agent ([`RemoteTarget`]). The trial and the kept-target logic use this one type.

use super::ledger::Ledger;
use super::remote_target::{RemoteSample, RemoteTarget};
use super::target::{RunningTarget, Stopped};
use crate::plan::{Ready, ResolvedTarget};
use crate::util::Cancel;
use std::time::Duration;

/// A started target, local or remote.
pub enum Sut {
    Local(RunningTarget),
    Remote(RemoteTarget),
}

impl Sut {
    /// Start `cfg` as `name`: here (recorded in `ledger`), or on its host.
    pub fn launch(cfg: &ResolvedTarget, name: &str, ledger: &Ledger) -> anyhow::Result<Sut> {
        match &cfg.host {
            None => RunningTarget::launch(cfg, name, ledger).map(Sut::Local),
            Some(h) => RemoteTarget::launch(cfg, h, name).map(Sut::Remote),
        }
    }

    pub fn wait_ready(&mut self, ready: &Ready, cancel: &Cancel) -> anyhow::Result<()> {
        match self {
            Sut::Local(t) => t.wait_ready(ready, cancel),
            Sut::Remote(t) => t.wait_ready(ready, cancel),
        }
    }

    /// The pid of a target on this machine (the local monitor samples its tree).
    pub fn local_pid(&self) -> Option<u32> {
        match self {
            Sut::Local(t) => Some(t.pid()),
            Sut::Remote(_) => None,
        }
    }

    /// A target on this machine's CPU limits, for the monitor.
    pub fn local_cpu_limits(&self) -> Option<crate::monitor::CpuLimits> {
        match self {
            Sut::Local(t) => t.limits.cpu_limits(),
            Sut::Remote(_) => None,
        }
    }

    /// The plan's name for a remote target's host (None on this machine).
    pub fn host(&self) -> Option<&str> {
        match self {
            Sut::Local(_) => None,
            Sut::Remote(t) => Some(t.host()),
        }
    }

    /// The limit mechanism used and its proof read back (on the target's host).
    pub fn limits(&self) -> (String, String) {
        match self {
            Sut::Local(t) => (t.limits.mechanism.to_string(), t.limits.proof(t.pid())),
            Sut::Remote(t) => (t.mechanism.clone(), t.proof.clone()),
        }
    }

    pub fn exited(&mut self) -> Option<String> {
        match self {
            Sut::Local(t) => t.exited(),
            Sut::Remote(t) => t.exited(),
        }
    }

    pub fn stderr_tail(&self) -> String {
        match self {
            Sut::Local(t) => t.stderr_tail(),
            Sut::Remote(_) => String::new(),
        }
    }

    /// For a remote target: sample its host and process tree every `interval` (clock offset
    /// measured again first); a warning when the offset is too uncertain for that interval.
    pub fn begin_sampling(&mut self, interval: Duration) -> anyhow::Result<Option<String>> {
        match self {
            Sut::Local(_) => Ok(None),
            Sut::Remote(t) => t.begin_sampling(interval),
        }
    }

    /// A live tap on a remote target's host's samples.
    pub fn tap(&self, monitored: &crate::plan::MonitorHosts) -> Option<super::remote_target::HostTap> {
        match self {
            Sut::Remote(t) => Some(t.tap(monitored)),
            Sut::Local(_) => None,
        }
    }

    /// A remote target's samples received so far and its host's clock measurements of the trial
    /// (none for a local one).
    pub fn take_samples(&mut self) -> (Vec<RemoteSample>, Vec<crate::remote::Measured>) {
        match self {
            Sut::Local(_) => Default::default(),
            Sut::Remote(t) => t.take_samples(),
        }
    }

    /// A remote target's host: start perf there (events disabled) for a profile of `kind`.
    pub fn profile_start(&mut self, kind: &str, scope: &str, frequency_hz: u32, call_graph: &str) -> anyhow::Result<()> {
        match self {
            Sut::Local(_) => Err(anyhow::anyhow!("the target runs on this machine")),
            Sut::Remote(t) => t.profile_start(kind, scope, frequency_hz, call_graph),
        }
    }

    /// A remote target's host: open (`enable`) or close (`disable`) its profiles' windows.
    pub fn profile_call(&mut self, what: &str) -> anyhow::Result<()> {
        match self {
            Sut::Local(_) => Err(anyhow::anyhow!("the target runs on this machine")),
            Sut::Remote(t) => t.profile_call(what),
        }
    }

    /// A remote target's host: stop perf and return its profiles (times since the window opened).
    pub fn profile_stop(&mut self) -> anyhow::Result<Vec<crate::model::Profile>> {
        match self {
            Sut::Local(_) => Err(anyhow::anyhow!("the target runs on this machine")),
            Sut::Remote(t) => t.profile_stop(),
        }
    }

    pub fn stop(self) -> anyhow::Result<Stopped> {
        match self {
            Sut::Local(t) => t.stop(),
            Sut::Remote(t) => t.stop(),
        }
    }
}
