//! `[workload] host = "server"`: an exec workload's commands run by that host's agent (`exec`), over
//! a channel opened for each command, and read by the same adapters as locally. Ctrl-C closes the
//! channel, and the agent kills the command's process group.

use crate::plan::HostSpec;
use crate::remote::protocol::{CommandSpec, ExecResult, Request};
use crate::util::Cancel;
use crate::workload::exec::process::{Exit, Finished, Stopped};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// Runs exec commands on one remote host.
pub struct RemoteExec {
    pub host: HostSpec,
}

impl crate::workload::exec::Runner for RemoteExec {
    fn run(
        &self,
        argv: &[String],
        cwd: Option<&Path>,
        env: &BTreeMap<String, String>,
        timeout: Duration,
        cancel: &Cancel,
    ) -> anyhow::Result<Finished> {
        let mut ch = crate::remote::open(&self.host)?;
        let req = Request::Exec {
            command: CommandSpec::Argv(argv.to_vec()),
            cwd: cwd.map(|p| p.display().to_string()),
            env: env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            timeout_s: timeout.as_secs_f64(),
        };
        let v = match ch.call_until_value(req, timeout + Duration::from_secs(30), &|| cancel.is_cancelled()) {
            Ok(v) => v,
            Err(_) if cancel.is_cancelled() => {
                // Closing the channel kills the command's group on the host.
                drop(ch);
                return Ok(Finished {
                    exit: Exit::Signal(libc::SIGTERM),
                    wall: Duration::ZERO,
                    user: Duration::ZERO,
                    system: Duration::ZERO,
                    max_rss_kb: 0,
                    stdout: String::new(),
                    stderr: String::new(),
                    truncated: false,
                    stopped: Some(Stopped::Cancelled),
                });
            }
            Err(e) => return Err(e),
        };
        let r: ExecResult = serde_json::from_value(v)
            .map_err(|e| anyhow::anyhow!("host `{}`: the agent's answer is not understood: {e}", self.host.name))?;
        let _ = ch.close();
        Ok(Finished {
            exit: match r.status {
                Some(c) => Exit::Code(c),
                None => Exit::Signal(libc::SIGKILL),
            },
            wall: Duration::try_from_secs_f64(r.elapsed_s).unwrap_or_default(),
            // The command's CPU time and peak memory, as the host's kernel accounted them.
            user: Duration::try_from_secs_f64(r.user_s).unwrap_or_default(),
            system: Duration::try_from_secs_f64(r.system_s).unwrap_or_default(),
            max_rss_kb: r.max_rss_kb,
            stdout: r.stdout,
            stderr: r.stderr,
            truncated: false,
            stopped: r.timed_out.then_some(Stopped::TimedOut),
        })
    }
}
