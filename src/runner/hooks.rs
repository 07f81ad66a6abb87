//! Variant hooks: shell commands run before a variant's trials (setup) and after them (teardown).

use crate::plan::VariantHooks;
use std::process::Command;

/// Run each command with `sh -c`; the first failure stops and is returned with its stderr.
pub fn run_all(kind: &str, variant: &str, commands: &[String]) -> anyhow::Result<()> {
    for c in commands {
        let out = Command::new("/bin/sh")
            .arg("-c")
            .arg(c)
            .output()
            .map_err(|e| anyhow::anyhow!("variant {variant} {kind} `{c}` could not start: {e}"))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            anyhow::bail!(
                "variant {variant} {kind} `{c}` failed ({}): {}",
                out.status,
                err.lines().last().unwrap_or("").trim()
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

/// Tracks which variant's setup is in force, so teardown always runs exactly once for it.
#[derive(Default)]
pub struct ActiveVariant {
    current: Option<(String, VariantHooks)>,
}

impl ActiveVariant {
    /// Switch to `next` (tearing down the current variant first). Returns a setup error, if any.
    pub fn switch(&mut self, next: Option<(&str, &VariantHooks)>) -> anyhow::Result<()> {
        if self.current.as_ref().map(|(n, _)| n.as_str()) == next.map(|(n, _)| n) {
            return Ok(());
        }
        let teardown = self.teardown();
        if let Some((name, hooks)) = next {
            self.current = Some((name.to_string(), hooks.clone()));
            run_all("setup", name, &hooks.setup)?;
        }
        teardown
    }

    /// Run the current variant's teardown (if any) and forget it.
    pub fn teardown(&mut self) -> anyhow::Result<()> {
        match self.current.take() {
            Some((name, hooks)) => run_all("teardown", &name, &hooks.teardown),
            None => Ok(()),
        }
    }
}
