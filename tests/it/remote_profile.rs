//! A profile of a target on another host, over the real sshd of `remote_ssh` (called from its one
//! test, which owns the server): `[profile]` with `[target] host = "server"` has the server's agent
//! run perf there during the load phase only, and the stacks come back to this machine's store
//! under the server's name.

use crate::profile_run::{hot_program, self_share};
use crate::remote_ssh::Server;
use perflab::model::Phase;
use perflab::store::Store;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

pub fn the_servers_target_is_profiled_through_its_agent(srv: &Server, key: &Path) {
    let dir = srv.dir.path().join("profile");
    std::fs::create_dir_all(&dir).expect("dir");
    let Some(prog) = hot_program(&dir) else {
        return;
    };
    let body = format!(
        r#"name = "remote-profile"

[hosts]
{host}

[target]
host = "server"
command = ["{prog}"]

[workload]
type = "exec"
command = "sleep 3"

[phases]
baseline = "300ms"
warmup = "300ms"
load = "3s"
recovery = "300ms"
interval = "250ms"

[profile]
on_cpu = true
frequency = 199
"#,
        host = srv.toml_host("server", key, BIN),
        prog = prog.display(),
    );
    let plan = crate::common::write_plan(&dir, &body);
    let runs = dir.join("runs");
    let out = Command::new(BIN)
        .args(["run", "-q", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("perflab run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = crate::common::only_run_dir(&runs);
    let store = Store::open(&run).expect("store");
    let trial = &store.trials().expect("trials")[0];
    assert!(trial.ok(), "{:?}", trial.failure);
    let profiles = store.profiles(trial.id).expect("profiles");
    assert_eq!(profiles.len(), 1, "one profile, the server's: {profiles:?}");
    assert_eq!(profiles[0].host, "server");
    let p = &profiles[0].profile;
    assert!(p.notes.is_empty(), "{:?}", p.notes);
    assert!(p.total_samples() >= 20, "{} samples", p.total_samples());
    let share = self_share(p, "hot_function", false);
    assert!(
        (60.0..=80.0).contains(&share),
        "hot_function has {share:.1} % of the server's samples: {}",
        p.folded(false)
    );
    // Within the load phase, on this machine's timeline (the agent's clock offset applied).
    let load = trial.phases.iter().find(|s| s.phase == Phase::Load).expect("load phase");
    let (first, last) = p.sampled.expect("sampled");
    let slack = 0.05;
    assert!(
        first >= load.start_s - slack && last <= load.end_s + slack,
        "samples {first}..{last}, load {}..{}",
        load.start_s,
        load.end_s
    );
    let md = std::fs::read_to_string(run.join("report.md")).expect("report.md");
    assert!(md.contains("## Profiles") && md.contains("hot_function"), "{md}");
    eprintln!(
        "remote profile: hot_function {share:.1} % of {} samples on the server",
        p.total_samples()
    );
}
