//! `[workload] from`: the work a split load's segments share (`Workload::shared`: the `oltp`
//! tables), done once per trial by segment 0's machine, here or through its agent (the
//! `workload_prepare` and `workload_cleanup` requests): the preparation in the trial's setup,
//! before the segments' common start is set (so no segment starts late for it, and every one
//! starts on loaded tables), the clean-up once every segment ended. Its time is in none of the
//! segments' phases; the trial's raw lines say which machine did it and how long it took. A
//! failure fails the trial with one line naming the machine; Ctrl-C stops it (closing the channel
//! stops what the agent does).

use crate::plan::HostSpec;
use crate::remote::protocol::{Request, SharedDone};
use crate::util::Cancel;
use crate::workload::SetupCtx;
use std::time::{Duration, Instant};

/// A workload table that is not in a plan file (the one an agent gets): its errors name the key.
pub struct NoFile;

impl crate::workload::registry::Locator for NoFile {
    fn at(&self, key: Option<&str>) -> String {
        key.map_or("[workload]".into(), |k| format!("[workload] {k}"))
    }
}

/// The two moments of the shared work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Before the segments' common start (`Workload::prepare_shared`).
    Prepare,
    /// Once every segment ended (`Workload::cleanup_shared`).
    Cleanup,
}

impl Step {
    fn word(self) -> &'static str {
        match self {
            Step::Prepare => "prepare",
            Step::Cleanup => "cleanup",
        }
    }

    fn op(self) -> &'static str {
        match self {
            Step::Prepare => "workload_prepare",
            Step::Cleanup => "workload_cleanup",
        }
    }
}

/// `step` done on this machine, on the whole workload built from its `[workload]` table (without
/// `from`): what was done and how long it took. The agent answers its requests with it.
pub fn here(step: Step, kind: &str, table: &toml::Table, ctx: &SetupCtx, progress: bool, cancel: &Cancel) -> anyhow::Result<SharedDone> {
    let mut w = crate::workload::registry::build(kind, table, &NoFile)?;
    let t = Instant::now();
    let said = match step {
        Step::Prepare => w.prepare_shared(ctx, progress, cancel)?,
        Step::Cleanup => w.cleanup_shared(cancel)?,
    };
    Ok(SharedDone {
        said,
        seconds: t.elapsed().as_secs_f64(),
    })
}

/// `step` done by `host` (None: this machine): the trial's raw line saying which machine did it
/// and how long it took, or the failure in one line naming the machine.
pub fn by(step: Step, host: Option<&HostSpec>, kind: &str, table: &toml::Table, ctx: &SetupCtx, cancel: &Cancel) -> anyhow::Result<String> {
    let name = host.map_or(crate::model::LOCAL_HOST, |h| h.name.as_str());
    let done = match host {
        None => here(step, kind, table, ctx, true, cancel),
        Some(h) => remote(step, h, kind, table, cancel),
    }
    .map_err(|e| anyhow::anyhow!("{} on {name}: {}", step.word(), crate::error::one_line(&e)))?;
    let (s, said) = (done.seconds, done.said);
    Ok(match step {
        Step::Prepare => format!("prepared by {name} in {s:.3} s, before the segments' common start: {said}"),
        Step::Cleanup => format!("cleaned up by {name} in {s:.3} s, after every segment ended: {said}"),
    })
}

/// `step` asked of `host`'s agent over a channel of its own; its answer, or why not. A large
/// preparation may take long: the agent's answer, the channel's loss or `cancel` ends the wait
/// (the channel then closes, which stops the agent's work).
fn remote(step: Step, host: &HostSpec, kind: &str, table: &toml::Table, cancel: &Cancel) -> anyhow::Result<SharedDone> {
    let mut ch = crate::remote::open(host)?;
    let (kind, table) = (kind.to_string(), toml::to_string(table)?);
    let req = match step {
        Step::Prepare => Request::WorkloadPrepare { kind, table },
        Step::Cleanup => Request::WorkloadCleanup { kind, table },
    };
    let v = ch
        .call_until_value(req, Duration::from_secs(24 * 3600), &|| cancel.is_cancelled())
        .map_err(|e| older_agent(e, &host.name, step))?;
    let done: SharedDone =
        serde_json::from_value(v).map_err(|e| anyhow::anyhow!("host `{}`: the agent's answer is not understood: {e}", host.name))?;
    let _ = ch.close();
    Ok(done)
}

/// An agent older than the request (it answers that it cannot read it) is told as such, with
/// what to do.
fn older_agent(e: anyhow::Error, host: &str, step: Step) -> anyhow::Error {
    if e.to_string().contains(&format!("unknown variant `{}`", step.op())) {
        return anyhow::anyhow!(
            "host `{host}`: its perflab agent is older than this perflab (it has no `{}` request): run `perflab hosts install PLAN`",
            step.op()
        );
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_without_the_request_is_said_to_be_older() {
        // What an agent that does not know an op answers (serde's words, after its own prefix).
        let unknown = serde_json::from_str::<crate::remote::protocol::Envelope>(r#"{"id": 1, "op": "workload_prepare_later"}"#);
        let e = unknown.expect_err("an unknown op").to_string();
        assert!(e.contains("unknown variant `workload_prepare_later`"), "{e}");
        let said = "host `client1`: agent: cannot read the request: unknown variant `workload_prepare`, expected one of `hello`, `clock`";
        let e = older_agent(anyhow::anyhow!("{said}"), "client1", Step::Prepare).to_string();
        assert_eq!(
            e,
            "host `client1`: its perflab agent is older than this perflab (it has no `workload_prepare` request): run `perflab hosts install PLAN`"
        );
        let other = older_agent(anyhow::anyhow!("host `client1`: access denied"), "client1", Step::Cleanup);
        assert_eq!(other.to_string(), "host `client1`: access denied");
    }
}
