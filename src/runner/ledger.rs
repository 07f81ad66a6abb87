//! What a run has started and not yet stopped, kept on disk while the run goes on, so that what a
//! perflab killed with SIGKILL (or crashed, or lost to a power cut) left behind can be stopped by
//! the next perflab (`reclaim`).
//!
//! - The run directory's [`LEDGER_FILE`] (`started.json`) names the perflab process that runs it
//!   (pid, start time, boot id), the variant whose setup ran (its teardown is pending), and each
//!   target: its cgroups (written before each is created) and its process group (written as soon
//!   as it is started). An entry goes when its target is stopped, the teardown entry when the
//!   teardown ran, and the file when the run ends. It is replaced whole (written under a temporary
//!   name, then renamed), so it is never half-written.
//! - The machine's run list ([`machine_dir`]: `/run/perflab`, or `$PERFLAB_RUNTIME_DIR`) holds one
//!   symbolic link per running perflab, `PID-START` → its run directory, so the next `perflab run`
//!   finds runs whose perflab is gone wherever their directories are.

use crate::util::process;
use crate::util::redact::Redactor;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The record's file name in a run directory.
pub const LEDGER_FILE: &str = "started.json";

/// The perflab process that runs a run: it is alive while this pid is the process that started at
/// `start` (clock ticks since boot) during the boot `boot`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub pid: i32,
    pub start: u64,
    pub boot: String,
}

impl Owner {
    /// This perflab.
    pub fn me() -> Owner {
        let pid = std::process::id() as i32;
        Owner {
            pid,
            start: process::stat(pid).map_or(0, |s| s.start),
            boot: process::boot_id(),
        }
    }

    /// Whether that perflab still runs.
    pub fn alive(&self) -> bool {
        self.boot == process::boot_id() && process::is_same_live(self.pid, self.start)
    }

    /// The name of its entry in the machine's run list.
    fn entry_name(&self) -> String {
        format!("{}-{}", self.pid, self.start)
    }
}

/// The variant whose setup ran: its teardown is still to run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingTeardown {
    pub variant: String,
    /// The teardown commands, each run with `sh -c` in `cwd`.
    pub commands: Vec<String>,
    pub cwd: PathBuf,
    /// The commands held credentials (Authorization or Cookie values), which perflab never writes
    /// to disk: `commands` are redacted and cannot be run.
    #[serde(default)]
    pub withheld: bool,
}

/// A target that was started: its cgroups and its process group.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartedTarget {
    /// The cgroups' name (`perflab-<pid>-<time>-t<trial>`), unique per start.
    pub name: String,
    /// The process group (its leader's pid), once started.
    pub pgid: Option<i32>,
    /// The leader's start time, clock ticks since boot.
    pub start: Option<u64>,
    pub cgroups: Vec<PathBuf>,
}

/// The content of [`LEDGER_FILE`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub owner: Owner,
    /// The record of a remote agent (`perflab agent --stdio`) on this host, kept in a directory of
    /// its own under the machine's run list ([`agent_dir`]), not of a run: it has no store.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub agent: bool,
    pub teardown: Option<PendingTeardown>,
    pub targets: Vec<StartedTarget>,
}

impl Record {
    /// The record of the run in `dir`: `Ok(None)` when there is none (the run ended, or was made
    /// by a perflab that kept none).
    pub fn read(dir: &Path) -> anyhow::Result<Option<Record>> {
        let path = dir.join(LEDGER_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(anyhow::anyhow!("cannot read {}: {e}", path.display())),
        }
    }

    fn target(&mut self, name: &str) -> &mut StartedTarget {
        if let Some(i) = self.targets.iter().position(|t| t.name == name) {
            return &mut self.targets[i];
        }
        self.targets.push(StartedTarget {
            name: name.to_string(),
            ..Default::default()
        });
        self.targets.last_mut().expect("just pushed")
    }
}

struct Inner {
    dir: PathBuf,
    rec: Record,
    /// The plan's secrets: no command is recorded with one in it.
    redactor: Redactor,
    /// This run's entry in the machine's run list.
    entry: Option<PathBuf>,
    /// A failed write is said once, not once per trial.
    warned: bool,
}

impl Inner {
    fn save(&mut self) {
        let text = match serde_json::to_string_pretty(&self.rec) {
            Ok(t) => t + "\n",
            Err(_) => return,
        };
        let path = self.dir.join(LEDGER_FILE);
        if let Err(e) = crate::util::fs::write_atomic(&path, text) {
            if !self.warned {
                self.warned = true;
                eprintln!(
                    "perflab: warning: cannot record what this run starts in {}: {e} (should perflab be killed, \
                     what it started would not be cleaned up by the next run)",
                    path.display()
                );
            }
        }
    }
}

/// The run's record, shared by the runner and its targets (cheap to clone). [`Ledger::none`]
/// records nothing.
#[derive(Clone, Default)]
pub struct Ledger(Option<Arc<Mutex<Inner>>>);

impl Ledger {
    /// A ledger that records nothing (a target started outside a run).
    pub fn none() -> Ledger {
        Ledger(None)
    }

    /// Start the record of the run in `dir` (replacing one a dead perflab left, which `reclaim`
    /// has dealt with) and list the run in the machine's run list. `redactor` holds the plan's
    /// secrets: a teardown command that holds one is recorded redacted (and withheld).
    pub fn open(dir: &Path, redactor: &Redactor) -> Ledger {
        Ledger::open_as(dir, false, redactor)
    }

    /// Start the record of this agent in its own directory ([`agent_dir`], made here) and list it
    /// in the machine's run list, so that the next perflab on this host cleans up after it should
    /// it be killed. `None` when the directory cannot be made (then nothing is recorded). The
    /// agent's targets hold no plan secret it knows of: its redactor is empty.
    pub fn open_agent() -> Option<Ledger> {
        let dir = agent_dir(&Owner::me())?;
        std::fs::create_dir_all(&dir).ok()?;
        Some(Ledger::open_as(&dir, true, &Redactor::default()))
    }

    fn open_as(dir: &Path, agent: bool, redactor: &Redactor) -> Ledger {
        let owner = Owner::me();
        let mut inner = Inner {
            dir: dir.to_path_buf(),
            rec: Record {
                owner: owner.clone(),
                agent,
                ..Default::default()
            },
            redactor: redactor.clone(),
            entry: None,
            warned: false,
        };
        // The record first: a listed run always has one.
        inner.save();
        inner.entry = register(dir, &owner);
        Ledger(Some(Arc::new(Mutex::new(inner))))
    }

    fn with(&self, f: impl FnOnce(&mut Record, &Redactor)) {
        if let Some(inner) = &self.0 {
            let mut g = inner.lock().unwrap_or_else(|p| p.into_inner());
            let Inner { rec, redactor, .. } = &mut *g;
            f(rec, redactor);
            g.save();
        }
    }

    /// Before a variant's setup runs: its teardown is pending from now on. A command that holds a
    /// credential (a credential header, or one of the plan's secrets) is recorded redacted, and the
    /// teardown withheld: perflab never writes the secret, so only the user can run it.
    pub fn variant_setup(&self, variant: &str, teardown: &[String]) {
        let cwd = std::env::current_dir().unwrap_or_default();
        self.with(|r, redactor| {
            let commands: Vec<String> = teardown.iter().map(|c| redactor.apply(c)).collect();
            r.teardown = Some(PendingTeardown {
                variant: variant.to_string(),
                withheld: commands != teardown,
                commands,
                cwd,
            })
        });
    }

    /// After the variant's teardown ran.
    pub fn variant_torn_down(&self) {
        self.with(|r, _| r.teardown = None);
    }

    /// Before the cgroup `dir` of the target `name` is created.
    pub fn cgroup(&self, name: &str, dir: &Path) {
        self.with(|r, _| r.target(name).cgroups.push(dir.to_path_buf()));
    }

    /// Right after the target `name` started, as the process group `pgid`.
    pub fn target_started(&self, name: &str, pgid: i32) {
        let start = process::stat(pgid).map(|s| s.start);
        self.with(|r, _| {
            let t = r.target(name);
            t.pgid = Some(pgid);
            t.start = start;
        });
    }

    /// After the target `name` was stopped and its cgroups removed.
    pub fn target_stopped(&self, name: &str) {
        self.with(|r, _| r.targets.retain(|t| t.name != name));
    }

    /// The run ended: remove the record and the machine's entry, unless something could not be
    /// stopped (a cgroup that would not go): then both stay, and the next perflab tries again.
    pub fn close(&self) {
        if let Some(inner) = &self.0 {
            let g = inner.lock().unwrap_or_else(|p| p.into_inner());
            if !g.rec.targets.is_empty() || g.rec.teardown.is_some() {
                return;
            }
            let _ = std::fs::remove_file(g.dir.join(LEDGER_FILE));
            if let Some(e) = &g.entry {
                let _ = std::fs::remove_file(e);
            }
            if g.rec.agent {
                let _ = std::fs::remove_dir(&g.dir);
            }
        }
    }
}

/// Where the agent `owner` keeps its record: `agents/PID-START` in the machine's run list.
pub fn agent_dir(owner: &Owner) -> Option<PathBuf> {
    Some(machine_dir()?.join("agents").join(owner.entry_name()))
}

/// The machine's run list: `$PERFLAB_RUNTIME_DIR` when set, else `/run/perflab` (root), else
/// `$XDG_RUNTIME_DIR/perflab`, else `perflab-UID` in the temporary directory. Created (mode 0700)
/// when missing; `None` when none can be.
pub fn machine_dir() -> Option<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let mut candidates = Vec::new();
    if let Some(d) = std::env::var_os("PERFLAB_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        candidates.push(PathBuf::from(d));
    } else {
        candidates.push(PathBuf::from("/run/perflab"));
        if let Some(x) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
            candidates.push(PathBuf::from(x).join("perflab"));
        }
        // SAFETY: getuid(2) takes no arguments and cannot fail.
        let uid = unsafe { libc::getuid() };
        candidates.push(std::env::temp_dir().join(format!("perflab-{uid}")));
    }
    candidates
        .into_iter()
        .find(|d| d.is_dir() || std::fs::DirBuilder::new().recursive(true).mode(0o700).create(d).is_ok())
}

/// List the run in `dir` in the machine's run list; the entry's path.
fn register(dir: &Path, owner: &Owner) -> Option<PathBuf> {
    let list = machine_dir()?;
    let target = std::fs::canonicalize(dir).ok()?;
    let entry = list.join(owner.entry_name());
    let _ = std::fs::remove_file(&entry);
    std::os::unix::fs::symlink(target, &entry).ok()?;
    Some(entry)
}

/// The machine's run list: (entry, run directory) for each run listed.
pub fn listed_runs(list: &Path) -> Vec<(PathBuf, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(list) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, PathBuf)> = rd
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            let target = std::fs::read_link(&p).ok()?;
            Some((p, target))
        })
        .collect();
    out.sort();
    out
}

/// Whether the entry `entry` of the machine's run list belongs to `owner`.
pub fn entry_is(entry: &Path, owner: &Owner) -> bool {
    entry.file_name().is_some_and(|n| n.to_string_lossy() == owner.entry_name())
}
