//! The programs a plan starts on a host, over the real sshd of `remote_ssh` (called from its one
//! test, which owns the server): `perflab` in a remote target's command is the agent's own binary
//! there (the server has no `perflab` on its PATH: the agent runs from the test's build, as from
//! the per-version cache `perflab hosts install` fills); a program the host lacks is said before the
//! run, by `perflab run` and `perflab hosts check`, as `server: no program `x` on PATH`.

use crate::remote_ssh::Server;
use perflab::store::Store;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");
/// serve's port on the server.
const SERVE_PORT: u16 = 18217;

fn plan(srv: &Server, key: &Path, program: &str, name: &str) -> std::path::PathBuf {
    let addr = &srv.addr;
    let body = format!(
        r#"name = "remote-{name}"

[hosts]
{host}

[target]
host = "server"
command = ["{program}", "serve", "--host", "{addr}", "--port", "{SERVE_PORT}"]
ready = {{ tcp = "{addr}:{SERVE_PORT}", timeout = "10s" }}
stop = {{ signal = "SIGTERM", grace = "5s" }}

[workload]
type = "http"
url = "http://{addr}:{SERVE_PORT}/"
connections = 1

[phases]
baseline = "200ms"
warmup = 0
load = "500ms"
recovery = "200ms"
interval = "100ms"
"#,
        host = srv.toml_host("server", key, BIN),
    );
    let dir = srv.dir.path().join(format!("plan-{name}"));
    std::fs::create_dir_all(&dir).expect("plan dir");
    crate::common::write_plan(&dir, &body)
}

/// The controller runs from a copy the server cannot see (its path exists on this machine only, as
/// a workstation's build does), and the server has no `perflab` on its PATH: `perflab` in the target's
/// command can only be the agent's own binary.
pub fn perflab_is_the_agents_own_binary(srv: &Server, key: &Path) {
    let on_path = Command::new("sh")
        .args([
            "-c",
            "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin command -v perflab",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if on_path {
        eprintln!("NOTE (perflab on the server): a `perflab` is on the server's PATH, so this checks less than it should");
    }
    let controller = srv.hidden().join("perflab");
    std::fs::copy(BIN, &controller).expect("a copy of perflab the server cannot see");
    let runs = srv.dir.path().join("runs-own-perflab");
    let out = Command::new(&controller)
        .args(["run", "-q", "--runs-dir"])
        .arg(&runs)
        .arg(plan(srv, key, "perflab", "own"))
        .output()
        .expect("perflab run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = Store::open(crate::common::only_run_dir(&runs)).expect("store");
    let trials = store.trials().expect("trials");
    assert_eq!(trials.len(), 1);
    assert!(trials[0].ok(), "{:?}", trials[0].failure);
    assert!(trials[0].metric("requests").unwrap_or(0.0) > 0.0, "serve answered");
}

pub fn a_missing_program_is_said_before_the_run(srv: &Server, key: &Path) {
    let missing = "perflab-no-such-program";
    let plan = plan(srv, key, missing, "missing");
    let runs = srv.dir.path().join("runs-missing");
    let out = Command::new(BIN)
        .args(["run", "-q", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("perflab run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("[target] command: server: no program `{missing}` on PATH")),
        "{err}"
    );
    assert!(!err.contains("limits"), "{err}");
    assert!(
        std::fs::read_dir(&runs).map(|d| d.count()).unwrap_or(0) == 0,
        "a run directory was made"
    );
    let out = Command::new(BIN)
        .args(["hosts", "check"])
        .arg(&plan)
        .output()
        .expect("perflab hosts check");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.lines()
            .any(|l| l == format!("server: no program `{missing}` on PATH ([target] command)")),
        "{text}"
    );
}
