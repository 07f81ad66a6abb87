//! Whether a host has the programs a plan starts there ([`crate::plan::programs_on_host`]): one
//! `exec` of `sh` on the host checks them all, each as its command would find it (its `cwd`, its
//! own `PATH`), so that a missing one is said before the run in the user's words, `server: no
//! program `x` on PATH`, rather than as a failure to start the target in every trial.

use super::channel::Channel;
use super::protocol::{CommandSpec, ExecResult, Request};
use crate::plan::NeededProgram;
use std::time::Duration;

/// Per program (its cwd, its PATH, its name as three arguments): `I dir` when the cwd is not a
/// directory, `I file` when a path is not an executable file, `I path` when a name is not on PATH.
const SCRIPT: &str = r#"i=0
while [ $# -ge 3 ]; do
  (
    if [ -n "$1" ]; then cd "$1" 2>/dev/null || { echo "$i dir"; exit 0; }; fi
    if [ -n "$2" ]; then PATH=$2; fi
    case $3 in
      */*) { [ -f "$3" ] && [ -x "$3" ]; } || echo "$i file" ;;
      *) command -v "$3" >/dev/null 2>&1 || echo "$i path" ;;
    esac
  )
  i=$((i + 1))
  shift 3
done
"#;

/// What is missing on the channel's host, as (index into `needed`, the reason in the user's words:
/// ``no program `x` on PATH``); empty when everything is there.
pub fn missing(ch: &mut Channel, needed: &[NeededProgram]) -> anyhow::Result<Vec<(usize, String)>> {
    if needed.is_empty() {
        return Ok(Vec::new());
    }
    let mut argv: Vec<String> = vec!["/bin/sh".into(), "-c".into(), SCRIPT.into(), "sh".into()];
    for n in needed {
        argv.push(n.cwd.clone().unwrap_or_default());
        argv.push(n.path.clone().unwrap_or_default());
        argv.push(n.program.clone());
    }
    let r: ExecResult = ch.call(
        Request::Exec {
            command: CommandSpec::Argv(argv),
            cwd: None,
            env: Vec::new(),
            timeout_s: 20.0,
        },
        Duration::from_secs(30),
    )?;
    if r.status != Some(0) {
        anyhow::bail!(
            "host `{}`: cannot check the programs the plan starts there: {}",
            ch.host,
            crate::util::text::clip(r.stderr.trim())
        );
    }
    let mut out = Vec::new();
    for line in r.stdout.lines() {
        let Some((i, kind)) = line.split_once(' ') else { continue };
        let Some(n) = i.parse::<usize>().ok().and_then(|i| needed.get(i).map(|n| (i, n))) else {
            continue;
        };
        let prog = crate::util::text::clip(&n.1.program);
        let why = match kind {
            "dir" => format!(
                "no directory `{}` (the working directory of `{prog}`)",
                crate::util::text::clip(n.1.cwd.as_deref().unwrap_or_default())
            ),
            "file" => format!("no program `{prog}` (not found or not executable)"),
            _ => format!("no program `{prog}` on PATH"),
        };
        out.push((n.0, why));
    }
    Ok(out)
}
