//! The plan's `[profile]` in a trial: perf is started (its events disabled) when the warm-up
//! begins, so that its own start is over before the load; the window opens when the load phase
//! starts and closes when it ends; perf is stopped and its stacks folded after the recovery (so
//! that `perf script` does not weigh on the phases measured). A profile that cannot be taken (perf
//! missing, not allowed, a remote target) is stored with no stacks and a note saying why: the trial
//! goes on, and the report says what is missing.

use super::sut::Sut;
use crate::model::{Profile, ProfileKind, LOCAL_HOST};
use crate::plan::{ProfileScope, ProfileSpec};
use crate::profile::{CallGraph, Options, Recorder, Scope};
use crate::store::ProfileRecord;
use std::sync::atomic::{AtomicBool, Ordering};

/// Said once per run on stderr (each trial's record keeps it too).
static WARNED: AtomicBool = AtomicBool::new(false);

/// The profiles of one trial, from the warm-up to the end of the recovery: taken here by perf
/// ([`Recorder`]), or on a remote target's host by its agent.
#[derive(Default)]
pub struct LoadProfiles {
    recorders: Vec<(ProfileKind, Recorder)>,
    /// The kinds the remote target's agent took, and the host's name.
    remote: Vec<ProfileKind>,
    host: Option<String>,
    /// When the windows opened, seconds since the trial started.
    opened_s: Option<f64>,
    /// Profiles that could not be taken: no stacks, a note.
    missing: Vec<ProfileRecord>,
    /// CLOCK_MONOTONIC at the trial's start.
    t0: f64,
}

impl LoadProfiles {
    /// Start perf for each kind the plan asks (nothing without `[profile]`): here, or through the
    /// agent of a remote target's host. `t0`: the trial's start on CLOCK_MONOTONIC.
    pub fn start(spec: Option<&ProfileSpec>, target: Option<&mut Sut>, t0: f64) -> LoadProfiles {
        let mut out = LoadProfiles { t0, ..Default::default() };
        let Some(spec) = spec.filter(|s| s.any()) else { return out };
        let scope_name = match spec.scope {
            ProfileScope::Target => "target",
            ProfileScope::Cgroup => "cgroup",
            ProfileScope::System => "system",
        };
        let kinds = [(spec.on_cpu, ProfileKind::OnCpu), (spec.off_cpu, ProfileKind::OffCpu)];
        let (remote, local): (Option<&mut Sut>, Option<&mut Sut>) = match target {
            Some(t) if t.host().is_some() => (Some(t), None),
            other => (None, other),
        };
        if let Some(t) = remote {
            out.host = t.host().map(str::to_string);
            for kind in kinds.into_iter().filter(|k| k.0).map(|k| k.1) {
                match t.profile_start(kind.name(), scope_name, spec.frequency_hz, &spec.call_graph) {
                    Ok(()) => out.remote.push(kind),
                    Err(e) => out.missing(kind, &crate::error::one_line(&e)),
                }
            }
            return out;
        }
        let pid = local.and_then(|t| t.local_pid()).map(|p| p as i32);
        for kind in kinds.into_iter().filter(|k| k.0).map(|k| k.1) {
            let started = crate::profile::scope_of(scope_name, pid).and_then(|scope| {
                crate::profile::availability(kind, &scope).map_err(|m| m.to_string())?;
                let opts = Options {
                    kind,
                    scope,
                    frequency_hz: spec.frequency_hz,
                    call_graph: CallGraph::parse(&spec.call_graph).unwrap_or_default(),
                };
                Recorder::start(opts).map_err(|e| format!("{e:#}"))
            });
            match started {
                Ok(r) => out.recorders.push((kind, r)),
                Err(why) => out.missing(kind, &why),
            }
        }
        out
    }

    fn missing(&mut self, kind: ProfileKind, why: &str) {
        let note = format!("no {} profile: {why}", kind.words());
        if !WARNED.swap(true, Ordering::SeqCst) {
            eprintln!("perflab: warning: {note}; the run goes on without it");
        }
        self.missing.push(ProfileRecord {
            host: self.host.clone().unwrap_or_else(|| LOCAL_HOST.to_string()),
            profile: Profile {
                kind: Some(kind),
                notes: vec![note],
                ..Profile::default()
            },
        });
    }

    /// The load phase starts (`now_s` since the trial started): open every window (here without
    /// waiting for perf, not to delay the load; a remote host's after one round trip).
    pub fn load_started(&mut self, target: Option<&mut Sut>, now_s: f64) {
        self.opened_s = Some(now_s);
        let mut failed = Vec::new();
        for (i, (_, r)) in self.recorders.iter_mut().enumerate() {
            if let Err(e) = r.enable() {
                failed.push((i, format!("{e:#}")));
            }
        }
        self.drop_failed(failed);
        if let (Some(t), false) = (target, self.remote.is_empty()) {
            if let Err(e) = t.profile_call("enable") {
                self.drop_remote(&crate::error::one_line(&e));
            }
        }
    }

    /// The load phase ended: close every window.
    pub fn load_ended(&mut self, target: Option<&mut Sut>) {
        let mut failed = Vec::new();
        for (i, (_, r)) in self.recorders.iter_mut().enumerate() {
            if let Err(e) = r.disable() {
                failed.push((i, format!("{e:#}")));
            }
        }
        self.drop_failed(failed);
        if let (Some(t), false) = (target, self.remote.is_empty()) {
            if let Err(e) = t.profile_call("disable") {
                self.drop_remote(&crate::error::one_line(&e));
            }
        }
    }

    fn drop_failed(&mut self, failed: Vec<(usize, String)>) {
        for (i, why) in failed.into_iter().rev() {
            let (kind, _) = self.recorders.remove(i);
            self.missing(kind, &why);
        }
    }

    fn drop_remote(&mut self, why: &str) {
        for kind in std::mem::take(&mut self.remote) {
            self.missing(kind, why);
        }
    }

    /// Stop perf and fold: the trial's profiles (those that failed, with their note).
    pub fn finish(mut self, target: Option<&mut Sut>) -> Vec<ProfileRecord> {
        if let (Some(t), false) = (target, self.remote.is_empty()) {
            match t.profile_stop() {
                Ok(profiles) => {
                    let host = self.host.clone().unwrap_or_default();
                    let at = self.opened_s.unwrap_or(0.0);
                    for mut p in profiles {
                        // The host's times count from its window's opening: placed on the trial's.
                        p.window = (p.window.0 + at, p.window.1 + at);
                        p.sampled = p.sampled.map(|(a, b)| (a + at, b + at));
                        self.missing.push(ProfileRecord {
                            host: host.clone(),
                            profile: p,
                        });
                    }
                    self.remote.clear();
                }
                Err(e) => self.drop_remote(&crate::error::one_line(&e)),
            }
        }
        let mut out = std::mem::take(&mut self.missing);
        for (kind, r) in std::mem::take(&mut self.recorders) {
            match r.finish(self.t0) {
                Ok(profile) => out.push(ProfileRecord {
                    host: LOCAL_HOST.to_string(),
                    profile,
                }),
                Err(e) => out.push(ProfileRecord {
                    host: LOCAL_HOST.to_string(),
                    profile: Profile {
                        kind: Some(kind),
                        notes: vec![format!("no {} profile: {e:#}", kind.words())],
                        ..Profile::default()
                    },
                }),
            }
        }
        out.sort_by(|a, b| (&a.host, a.profile.kind).cmp(&(&b.host, b.profile.kind)));
        out
    }
}

/// The dry run's lines about `[profile]`: what will be profiled, or what is missing here and how
/// to enable it (the run then goes on without the profile).
pub fn dry_run_lines(spec: Option<&ProfileSpec>, program: Option<&str>) -> Vec<String> {
    let Some(spec) = spec.filter(|s| s.any()) else { return Vec::new() };
    let scope = match spec.scope {
        ProfileScope::System => Scope::System,
        ProfileScope::Cgroup => Scope::Cgroup("/".into()),
        ProfileScope::Target => Scope::Processes(Vec::new()),
    };
    let whom = match spec.scope {
        ProfileScope::System => "the whole machine",
        ProfileScope::Cgroup => "the target's cgroup",
        ProfileScope::Target => "the target's process tree",
    };
    let mut out = Vec::new();
    for (on, kind) in [(spec.on_cpu, ProfileKind::OnCpu), (spec.off_cpu, ProfileKind::OffCpu)] {
        if !on {
            continue;
        }
        let how = match kind {
            ProfileKind::OnCpu => format!("{} Hz, {} stacks", spec.frequency_hz, spec.call_graph),
            ProfileKind::OffCpu => format!("sched:sched_switch, {} stacks", spec.call_graph),
        };
        match crate::profile::availability(kind, &scope) {
            Ok(()) => out.push(format!("profile: {} of {whom} during each load phase ({how})", kind.words())),
            Err(m) => out.push(format!(
                "profile: warning: no {} profile can be taken here: {m}; the run goes on without it",
                kind.words()
            )),
        }
    }
    if let Some(note) = program.and_then(crate::profile::check::symbols_of_program) {
        out.push(format!("profile: note: {note}"));
    }
    out
}
