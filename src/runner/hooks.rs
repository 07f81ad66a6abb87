//! Variant hooks: shell commands run before a variant's trials (setup) and after them (teardown).
//!
//! Each command runs with `sh -c` in its own process group, so the SIGINT a terminal sends to
//! perflab's group on Ctrl-C does not cut a teardown short. A setup is stopped by Ctrl-C; a teardown
//! always runs to its end.

use super::ledger::Ledger;
use crate::plan::VariantHooks;
use crate::util::Cancel;
use std::path::Path;
use std::process::Command;

/// Run each command with `sh -c` (in `cwd`, else perflab's own directory); the first failure stops
/// and is returned with its stderr. `cancel` stops a command that is running (and fails the hook).
pub fn run_all(kind: &str, variant: &str, commands: &[String], cwd: Option<&Path>, cancel: &Cancel) -> anyhow::Result<()> {
    for c in commands {
        let argv = ["/bin/sh".to_string(), "-c".to_string(), c.clone()];
        let out = crate::workload::exec::process::run(&argv, cwd, &Default::default(), std::time::Duration::MAX, cancel)
            .map_err(|e| anyhow::anyhow!("variant {variant} {kind} `{c}` could not start: {e:#}"))?;
        if out.stopped.is_some() {
            anyhow::bail!("variant {variant} {kind} `{c}` was interrupted");
        }
        if out.exit != crate::workload::exec::process::Exit::Code(0) {
            anyhow::bail!(
                "variant {variant} {kind} `{c}` failed ({}): {}",
                out.exit,
                out.stderr.lines().last().unwrap_or("").trim()
            );
        }
    }
    Ok(())
}

/// The variants whose `skip_unless` preconditions fail here, each with a one-line reason: the last
/// line the check printed on stderr, or the command and its exit status when it printed nothing.
pub fn unmet_preconditions(hooks: &std::collections::BTreeMap<String, VariantHooks>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, h) in hooks {
        for c in &h.skip_unless {
            let why = match Command::new("/bin/sh").arg("-c").arg(c).stdin(std::process::Stdio::null()).output() {
                Ok(o) if o.status.success() => continue,
                Ok(o) => {
                    let err = String::from_utf8_lossy(&o.stderr);
                    match err.lines().rev().map(str::trim).find(|l| !l.is_empty()) {
                        Some(line) => line.to_string(),
                        None => format!("`{c}` failed ({})", o.status),
                    }
                }
                Err(e) => format!("`{c}` could not start: {e}"),
            };
            out.push((name.clone(), why));
            break;
        }
    }
    out
}

/// Tracks which variant's setup is in force, so teardown always runs exactly once for it; the
/// ledger knows it too, so a teardown a killed perflab could not run is run by the next one.
#[derive(Default)]
pub struct ActiveVariant {
    current: Option<(String, VariantHooks)>,
    ledger: Ledger,
}

impl ActiveVariant {
    pub fn new(ledger: Ledger) -> ActiveVariant {
        ActiveVariant { current: None, ledger }
    }

    /// Switch to `next` (tearing down the current variant first). Returns a setup error, if any;
    /// `cancel` stops a setup that is running.
    pub fn switch(&mut self, next: Option<(&str, &VariantHooks)>, cancel: &Cancel) -> anyhow::Result<()> {
        if self.current.as_ref().map(|(n, _)| n.as_str()) == next.map(|(n, _)| n) {
            return Ok(());
        }
        let teardown = self.teardown();
        if let Some((name, hooks)) = next {
            self.current = Some((name.to_string(), hooks.clone()));
            self.ledger.variant_setup(name, &hooks.teardown);
            run_all("setup", name, &hooks.setup, None, cancel)?;
        }
        teardown
    }

    /// Run the current variant's teardown (if any) and forget it. Nothing stops it.
    pub fn teardown(&mut self) -> anyhow::Result<()> {
        match self.current.take() {
            Some((name, hooks)) => {
                let r = run_all("teardown", &name, &hooks.teardown, None, &Cancel::new());
                self.ledger.variant_torn_down();
                r
            }
            None => Ok(()),
        }
    }
}
