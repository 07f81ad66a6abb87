//! `perflab dist slurm|k8s`: the files written for a known plan equal the reviewed ones in
//! tests/fixtures/dist/ (`PERFLAB_BLESS=1` rewrites them after a reviewed change); the Kubernetes
//! objects pass `kubernetes-validate --strict` (PyPI) against the API of Kubernetes 1.30; the sbatch
//! script is valid bash; a plan that cannot be split is refused with one line.

use crate::common::skip_unless_required;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dist")
}

/// `got` equals the reviewed file `name` (or becomes it under PERFLAB_BLESS=1).
fn golden(name: &str, got: &str) {
    let path = fixtures().join(name);
    if std::env::var_os("PERFLAB_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(got, want, "{name} differs from the reviewed file (PERFLAB_BLESS=1 rewrites it)");
}

#[test]
fn k8s_objects_are_the_reviewed_ones_and_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("k8s");
    let o = Command::new(BIN)
        .args(["dist", "k8s"])
        .arg(fixtures().join("web.toml"))
        .args([
            "--agents",
            "3",
            "--image",
            "registry.example/perflab:1",
            "--namespace",
            "load",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("kubectl patch configmap perflab-web-scale-out"), "{stdout}");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "00-configmap.json",
            "01-results-claim.json",
            "02-load-job.json",
            "03-merge-job.json"
        ]
    );
    for (f, n) in files.iter().zip(&names) {
        golden(&format!("k8s/{n}"), &std::fs::read_to_string(f).unwrap());
    }
    // What the segments read: the plan as written, the Job's completions as PERFLAB_SEGMENTS.
    let job: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&files[2]).unwrap()).unwrap();
    assert_eq!(job["spec"]["completionMode"], "Indexed");
    assert_eq!(job["spec"]["backoffLimitPerIndex"], 0);
    assert_eq!(job["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"], "3");
    let cm: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_eq!(
        cm["data"]["plan.toml"],
        std::fs::read_to_string(fixtures().join("web.toml")).unwrap()
    );
    assert!(cm["data"].get("start-at").is_none(), "no common start before the pods run");

    let v = Command::new("python3")
        .args(["-m", "kubernetes_validate", "--strict", "-k", "1.30.0"])
        .args(&files)
        .output();
    match v {
        Ok(v) if v.status.code() != Some(1) || !String::from_utf8_lossy(&v.stderr).contains("No module named") => {
            let text = format!("{}{}", String::from_utf8_lossy(&v.stdout), String::from_utf8_lossy(&v.stderr));
            assert!(v.status.success(), "kubernetes-validate --strict: {text}");
            assert_eq!(text.matches("passed").count(), 4, "{text}");
        }
        _ => {
            skip_unless_required("kubernetes-validate (PyPI) is not installed");
        }
    }
}

#[test]
fn the_sbatch_script_is_the_reviewed_one_and_bash_reads_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("shared");
    let o = Command::new(BIN)
        .args(["dist", "slurm"])
        .arg(fixtures().join("web.toml"))
        .args(["--nodes", "3", "--start-in", "20s", "--sbatch=--partition=debug", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let script = std::fs::read_to_string(dir.join("perflab.sbatch")).unwrap();
    golden("perflab.sbatch", &script.replace(&dir.display().to_string(), "/shared"));
    assert_eq!(
        std::fs::read_to_string(dir.join("plan.toml")).unwrap(),
        std::fs::read_to_string(fixtures().join("web.toml")).unwrap()
    );
    let n = Command::new("bash").arg("-n").arg(dir.join("perflab.sbatch")).output().unwrap();
    assert!(n.status.success(), "{}", String::from_utf8_lossy(&n.stderr));
}

#[test]
fn a_plan_that_cannot_be_split_is_refused_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("exec.toml");
    std::fs::write(&plan, "name = \"tool\"\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n").unwrap();
    for args in [
        vec!["dist", "slurm", "--nodes", "2"],
        vec!["dist", "k8s", "--agents", "2", "--image", "x"],
    ] {
        let o = Command::new(BIN).args(&args).arg(&plan).current_dir(tmp.path()).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("exec.toml") && err.contains("cannot be split"), "{err}");
    }
    let o = Command::new(BIN)
        .args(["dist", "slurm", "--nodes", "0"])
        .arg(fixtures().join("web.toml"))
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("from 1 to"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Nothing was written for a refused plan.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
}

/// Stops the `perflab serve` the test started, by its PID, on every exit path.
struct Served(std::process::Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The sbatch script run as Slurm runs it, with a stand-in `srun` first on PATH that starts its
/// command once per task with `SLURM_PROCID` and `SLURM_NTASKS` (bash reads the `#SBATCH` lines as
/// comments): two segments of 11 requests against `perflab serve` begin at the script's common
/// start, and the merged run holds all 11 (6 and 5).
#[test]
fn the_sbatch_script_runs_the_segments_and_merges_them() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let port = crate::common::free_port();
    let _served = Served(
        Command::new(BIN)
            .args(["serve", "--port", &port.to_string()])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let plan = crate::common::write_plan(
        tmp.path(),
        &format!(
            "name = \"split\"\n[workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:{port}/\"\nconnections = 3\nrequests = 11\n\
             [phases]\nbaseline = \"200ms\"\nwarmup = \"0s\"\nload = \"3s\"\nrecovery = \"200ms\"\ninterval = \"100ms\"\n"
        ),
    );
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let srun = bin.join("srun");
    std::fs::write(
        &srun,
        "#!/bin/bash\n# srun --ntasks=N [options] cmd args...: cmd once per task, at once.\n\
         n=1; while [[ $1 == --* ]]; do case $1 in --ntasks=*) n=${1#--ntasks=};; esac; shift; done\n\
         pids=(); for ((i = 0; i < n; i++)); do SLURM_PROCID=$i SLURM_NTASKS=$n \"$@\" & pids+=($!); done\n\
         rc=0; for p in \"${pids[@]}\"; do wait \"$p\" || rc=$?; done; exit $rc\n",
    )
    .unwrap();
    std::fs::set_permissions(&srun, std::fs::Permissions::from_mode(0o755)).unwrap();
    let shared = tmp.path().join("shared");
    let o = Command::new(BIN)
        .args(["dist", "slurm"])
        .arg(&plan)
        .args([
            "--nodes",
            "2",
            "--start-in",
            "2s",
            "--start-tolerance",
            "5s",
            "--perflab",
            BIN,
            "--dir",
        ])
        .arg(&shared)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let job = Command::new("bash")
        .arg(shared.join("perflab.sbatch"))
        .env("PATH", path)
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&job.stdout), String::from_utf8_lossy(&job.stderr));
    assert!(job.status.success(), "{said}");
    let requests = |dir: &Path| -> f64 {
        let store = perflab::store::Store::open(dir).unwrap_or_else(|e| panic!("{}: {e:#}", dir.display()));
        let trials = store.trials().unwrap();
        assert_eq!(trials.len(), 1);
        trials[0].metric("requests").expect("requests measured")
    };
    let segments: Vec<f64> = (0..2)
        .map(|i| requests(&crate::common::only_run_dir(&shared.join(format!("segment-{i}")))))
        .collect();
    assert_eq!(segments, [6.0, 5.0], "{said}");
    assert_eq!(requests(&shared.join("merged")), 11.0, "{said}");
    // A second job in the same directory would find every segment twice: refused before writing.
    let again = Command::new(BIN)
        .args(["dist", "slurm"])
        .arg(&plan)
        .args(["--nodes", "2", "--dir"])
        .arg(&shared)
        .output()
        .unwrap();
    crate::common::one_line_exit_2(&again, "holds an earlier job's runs (merged/)");
}
