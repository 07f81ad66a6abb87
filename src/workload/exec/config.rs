//! The `[workload]` table of `type = "exec"`: what to run and how to read its output.

use crate::util::command::CommandLine;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// A duration written as a string (`"30s"`) or a number of seconds.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum DurationSpec {
    Secs(f64),
    Text(String),
}

impl DurationSpec {
    pub fn get(&self) -> Result<Duration, String> {
        match self {
            DurationSpec::Secs(s) => crate::util::duration::from_secs_f64(*s, &s.to_string()),
            DurationSpec::Text(t) => crate::util::duration::parse(t),
        }
    }
}

/// The default upper bound on one run of the command when the plan gives no `timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3600);

/// `[workload] type = "exec"`. The command runs to completion: its run time *is* the load phase
/// (the plan's `load` duration is not imposed on it; size the tool's own duration option).
/// Warm-up: `warmup_command` (run first, unmeasured, output discarded), or `warmup_run = true` (the
/// command itself, unmeasured), or neither (the plan's warm-up time passes idle).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExecConfig {
    /// What to run: an argv list or a shell string.
    pub command: CommandLine,
    /// Working directory (default: perflab's).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The adapter that parses the output (`fio`, `stress-ng`, ...); by default detected from the
    /// program name; `"none"` for no parsing (wall time and exit status only).
    #[serde(default)]
    pub adapter: Option<String>,
    /// Kill the command (its whole process group) after this long; the trial then fails.
    #[serde(default)]
    pub timeout: Option<DurationSpec>,
    /// Run before the measured command, not measured (e.g. lay out fio's files).
    #[serde(default)]
    pub warmup_command: Option<CommandLine>,
    /// Run `command` itself once as the warm-up (unmeasured).
    #[serde(default)]
    pub warmup_run: bool,
}

impl ExecConfig {
    /// A config for `argv` with every other field at its default.
    pub fn argv<S: Into<String>>(argv: impl IntoIterator<Item = S>) -> Self {
        ExecConfig {
            command: CommandLine::Argv(argv.into_iter().map(Into::into).collect()),
            cwd: None,
            env: BTreeMap::new(),
            adapter: None,
            timeout: None,
            warmup_command: None,
            warmup_run: false,
        }
    }

    /// A config for a shell string with every other field at its default.
    pub fn shell(cmd: impl Into<String>) -> Self {
        ExecConfig {
            command: CommandLine::Shell(cmd.into()),
            ..ExecConfig::argv(Vec::<String>::new())
        }
    }

    /// The timeout, checked.
    pub fn timeout(&self) -> Result<Duration, String> {
        match &self.timeout {
            None => Ok(DEFAULT_TIMEOUT),
            Some(d) => d.get().map_err(|e| format!("timeout: {e}")),
        }
    }
}
