//! The agent's profiles (`profile_start`, `profile_enable`, `profile_disable`, `profile_stop`):
//! perf on this host, around the load phase of a remote target, as `runner/profiles.rs` takes them
//! on the controller's machine. The profiles' times count from the window's opening here, so the
//! controller places them on its trial's timeline without the clocks' offset.

use crate::model::{Profile, ProfileKind};
use crate::profile::{CallGraph, Options, Recorder};

#[derive(Default)]
pub struct Profiles {
    recorders: Vec<Recorder>,
    /// CLOCK_MONOTONIC when the windows opened.
    opened: Option<f64>,
}

impl Profiles {
    /// Start perf (events disabled) for a profile of `kind` of the process `pid`'s tree, its
    /// cgroup or the whole host.
    pub fn start(&mut self, kind: &str, scope: &str, pid: Option<i32>, frequency_hz: u32, call_graph: &str) -> anyhow::Result<()> {
        let kind = ProfileKind::parse(kind).ok_or_else(|| anyhow::anyhow!("unknown profile kind `{kind}`"))?;
        let scope = crate::profile::scope_of(scope, pid).map_err(|e| anyhow::anyhow!("{e}"))?;
        crate::profile::availability(kind, &scope).map_err(|m| anyhow::anyhow!("{m}"))?;
        if !(1..=10_000).contains(&frequency_hz) {
            anyhow::bail!("profile frequency {frequency_hz} Hz is outside 1..10000");
        }
        let opts = Options {
            kind,
            scope,
            frequency_hz,
            call_graph: CallGraph::parse(call_graph).unwrap_or_default(),
        };
        self.recorders.push(Recorder::start(opts)?);
        Ok(())
    }

    pub fn enable(&mut self) -> anyhow::Result<()> {
        self.opened = Some(crate::profile::monotonic_now());
        self.recorders.iter_mut().try_for_each(Recorder::enable)
    }

    pub fn disable(&mut self) -> anyhow::Result<()> {
        self.recorders.iter_mut().try_for_each(Recorder::disable)
    }

    /// Stop perf and fold: each profile, its times in seconds since the windows opened.
    pub fn stop(&mut self) -> anyhow::Result<Vec<Profile>> {
        let t0 = self.opened.take().unwrap_or_else(crate::profile::monotonic_now);
        std::mem::take(&mut self.recorders).into_iter().map(|r| r.finish(t0)).collect()
    }
}
