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
