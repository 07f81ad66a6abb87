//! `perflab dist k8s --apply` against a fake Kubernetes API server in the test process (HTTP/1.1
//! over TLS with a test CA, a bearer token), not a real cluster: the objects applied are the files
//! written, the common start is published in the ConfigMap, and each "pod" is the Job's own shell
//! command run here (its paths moved into a scratch directory) against a loopback `perflab serve`,
//! its output served as the pod's log; the merged run's requests are the segments' sum. A 403, an
//! exec credential plugin, an unreachable server and a pod that cannot pull its image are one line
//! each; Ctrl-C while the pods are Pending deletes the Job and exits 130.

use perflab::store::Store;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{free_port, write_plan};
use crate::tls_certs::Certs;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");
const TOKEN: &str = "test-token-3f9a";
const NAME: &str = "perflab-split";
const AGENTS: usize = 2;

/// What one request was.
#[derive(Clone, Debug)]
struct Req {
    method: String,
    path: String,
    authorization: Option<String>,
    content_type: Option<String>,
    body: Vec<u8>,
}

#[derive(Default)]
struct State {
    requests: Vec<Req>,
    config: Option<Value>,
    job: Option<Value>,
    /// Each segment's log and exit code once its "pod" ended.
    ended: Vec<Option<(String, i32)>>,
    started: bool,
    mode: Mode,
}

/// How the fake cluster behaves.
#[derive(Clone, Copy, Default, PartialEq)]
enum Mode {
    /// Pods run at once; each runs its segment once the common start is published.
    #[default]
    Runs,
    /// A 403 to the Job's apply.
    ForbidJobs,
    /// The pods stay Pending, their container waiting for this reason ("" for none).
    Pending(&'static str),
}

struct Fake {
    port: u16,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn fake(certs: &Certs, scratch: &Path, mode: Mode) -> Fake {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(certs.path("server.crt"))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(certs.path("server.key")).unwrap();
    let config = Arc::new(
        rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let state = Arc::new(Mutex::new(State {
        ended: vec![None; AGENTS],
        mode,
        ..State::default()
    }));
    let stop = Arc::new(AtomicBool::new(false));
    let (st, sp, scratch) = (state.clone(), stop.clone(), scratch.to_path_buf());
    let thread = std::thread::spawn(move || {
        // Bounded: the test's own run is bounded, and the server stops with the test.
        while !sp.load(Ordering::SeqCst) {
            match listener.accept() {
                Ok((tcp, _)) => {
                    tcp.set_nonblocking(false).unwrap();
                    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                    let conn = rustls::ServerConnection::new(config.clone()).unwrap();
                    let mut s = rustls::StreamOwned::new(conn, tcp);
                    if let Some(req) = read_request(&mut s) {
                        let (status, body) = answer(&st, &req, &scratch);
                        let head = format!(
                            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                            body.len()
                        );
                        let _ = s.write_all(head.as_bytes()).and_then(|_| s.write_all(&body));
                        s.conn.send_close_notify();
                        let _ = s.flush();
                    }
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    Fake {
        port,
        state,
        stop,
        thread: Some(thread),
    }
}

fn read_request(s: &mut impl Read) -> Option<Req> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = s.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        raw.extend_from_slice(&buf[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut r = httparse::Request::new(&mut headers);
        if let Ok(httparse::Status::Complete(at)) = r.parse(&raw) {
            let h = |n: &str| {
                r.headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case(n))
                    .map(|h| String::from_utf8_lossy(h.value).into_owned())
            };
            let len: usize = h("content-length").map_or(0, |l| l.parse().unwrap());
            let mut req = Req {
                method: r.method?.to_string(),
                path: r.path?.to_string(),
                authorization: h("authorization"),
                content_type: h("content-type"),
                body: Vec::new(),
            };
            while raw.len() < at + len {
                let n = s.read(&mut buf).ok()?;
                if n == 0 {
                    return None;
                }
                raw.extend_from_slice(&buf[..n]);
            }
            req.body = raw[at..at + len].to_vec();
            return Some(req);
        }
    }
}

fn status(code: u16, reason: &str) -> (u16, Vec<u8>) {
    let v = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "code": code,
                   "message": format!("fake: {reason}")});
    (code, v.to_string().into_bytes())
}

/// The fake API server's answer to `req`.
fn answer(state: &Arc<Mutex<State>>, req: &Req, scratch: &Path) -> (u16, Vec<u8>) {
    let mut st = state.lock().unwrap();
    st.requests.push(req.clone());
    let path = req.path.split('?').next().unwrap_or("");
    let ns = "/namespaces/load/";
    match (req.method.as_str(), path) {
        ("PATCH", p) if p == format!("/api/v1{ns}configmaps/{NAME}") => {
            let v: Value = serde_json::from_slice(&req.body).unwrap();
            if v["data"]["start-at"].is_string() && !st.started {
                st.started = true;
                run_pods(state.clone(), &v, st.job.clone().unwrap(), scratch);
            }
            st.config = Some(v.clone());
            (200, v.to_string().into_bytes())
        }
        ("PATCH", p) if p == format!("/api/v1{ns}persistentvolumeclaims/{NAME}-results") => (201, req.body.clone()),
        ("PATCH", p) if p == format!("/apis/batch/v1{ns}jobs/{NAME}") => {
            if st.mode == Mode::ForbidJobs {
                return status(403, "Forbidden");
            }
            st.job = Some(serde_json::from_slice(&req.body).unwrap());
            (201, req.body.clone())
        }
        ("GET", p) if p == format!("/apis/batch/v1{ns}jobs/{NAME}") => {
            let Some(mut job) = st.job.clone() else {
                return status(404, "NotFound");
            };
            let failed: Vec<String> = (0..AGENTS)
                .filter(|i| st.ended[*i].as_ref().is_some_and(|(_, rc)| *rc != 0))
                .map(|i| i.to_string())
                .collect();
            let done = st.ended.iter().all(|e| e.as_ref().is_some_and(|(_, rc)| *rc == 0));
            job["status"] = if done {
                json!({"succeeded": AGENTS, "conditions": [{"type": "Complete", "status": "True"}]})
            } else {
                json!({"active": AGENTS, "failedIndexes": failed.join(",")})
            };
            (200, job.to_string().into_bytes())
        }
        ("GET", p) if p == format!("/api/v1{ns}pods") => {
            assert_eq!(req.path, format!("/api/v1{ns}pods?labelSelector=perflab%2Frun%3D{NAME}"));
            let items: Vec<Value> = (0..AGENTS)
                .map(|i| {
                    let (phase, state) = match (&st.ended[i], st.mode) {
                        (_, Mode::Pending(why)) => ("Pending", json!({"waiting": {"reason": why, "message": "fake: no such image"}})),
                        (None, _) => ("Running", json!({"running": {}})),
                        (Some((_, 0)), _) => ("Succeeded", json!({"terminated": {"exitCode": 0}})),
                        (Some((_, rc)), _) => ("Failed", json!({"terminated": {"exitCode": rc}})),
                    };
                    json!({"metadata": {"name": format!("{NAME}-{i}-x7k2p"),
                                        "annotations": {"batch.kubernetes.io/job-completion-index": i.to_string()}},
                           "status": {"phase": phase, "containerStatuses": [{"name": "segment", "state": state}]}})
                })
                .collect();
            (200, json!({"kind": "PodList", "items": items}).to_string().into_bytes())
        }
        ("GET", p) if p.starts_with(&format!("/api/v1{ns}pods/{NAME}-")) && p.ends_with("-x7k2p/log") => {
            let i: usize = p[format!("/api/v1{ns}pods/{NAME}-").len()..]
                .split('-')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            match &st.ended[i] {
                Some((log, _)) => (200, log.clone().into_bytes()),
                None => (200, Vec::new()),
            }
        }
        ("DELETE", p) if p == format!("/apis/batch/v1{ns}jobs/{NAME}") => (200, b"{}".to_vec()),
        _ => status(404, "NotFound"),
    }
}

/// The pods: the Job's own command for each index, its paths moved into `scratch`, run here at
/// once (all "scheduled"), each one's output kept as its log.
fn run_pods(state: Arc<Mutex<State>>, config: &Value, job: Value, scratch: &Path) {
    let cm = scratch.join("cm");
    std::fs::create_dir_all(&cm).unwrap();
    for key in ["plan.toml", "start-at"] {
        std::fs::write(cm.join(key), config["data"][key].as_str().unwrap()).unwrap();
    }
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["command"][0], "sh");
    let script = container["command"][2]
        .as_str()
        .unwrap()
        .replace("/perflab/", &format!("{}/", cm.display()))
        .replace("/results/", &format!("{}/results/", scratch.display()));
    let path = format!(
        "{}:{}",
        Path::new(BIN).parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for i in 0..AGENTS {
        let (state, script, path) = (state.clone(), script.clone(), path.clone());
        let segments = container["env"][0]["value"].as_str().unwrap().to_string();
        std::thread::spawn(move || {
            let out = Command::new("sh")
                .arg("-c")
                .arg(format!("exec 2>&1; {script}"))
                .env("PATH", path)
                .env("JOB_COMPLETION_INDEX", i.to_string())
                .env("PERFLAB_SEGMENTS", segments)
                .output()
                .expect("run the pod's command");
            let log = String::from_utf8_lossy(&out.stdout).into_owned();
            state.lock().unwrap().ended[i] = Some((log, out.status.code().unwrap_or(-1)));
        });
    }
}

/// A kubeconfig for the fake server: its CA or `insecure-skip-tls-verify`, a token or an exec
/// plugin.
fn kubeconfig(dir: &Path, port: u16, certs: &Certs, user: &str, insecure: bool) -> PathBuf {
    use base64::Engine as _;
    let trust = if insecure {
        "insecure-skip-tls-verify: true".to_string()
    } else {
        let ca = std::fs::read(certs.path("ca.pem")).unwrap();
        format!(
            "certificate-authority-data: {}",
            base64::engine::general_purpose::STANDARD.encode(ca)
        )
    };
    let text = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: fake\nclusters:\n- name: fake\n  cluster:\n    server: https://localhost:{port}\n    {trust}\n\
         contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: tester\n    namespace: load\n\
         users:\n- name: tester\n  user:\n{user}\n"
    );
    let path = dir.join("kubeconfig");
    std::fs::write(&path, text).unwrap();
    path
}

fn apply(kubeconfig: &Path, plan: &Path, out: &Path) -> std::process::Output {
    apply_cmd(kubeconfig, plan, out).output().expect("run perflab dist k8s --apply")
}

fn apply_cmd(kubeconfig: &Path, plan: &Path, out: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.args(["dist", "k8s"])
        .arg(plan)
        .args(["--agents", "2", "--image", "registry.example/perflab:1", "--apply"])
        .args(["--start-in", "1s", "--wait", "20s", "--start-tolerance", "30s", "--out"])
        .arg(out)
        .env("KUBECONFIG", kubeconfig);
    c
}

#[test]
fn apply_runs_the_segments_publishes_the_start_collects_the_logs_and_merges() {
    let Some(certs) = Certs::make() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let _served = crate::dist_segment::serve(port);
    let plan = write_plan(tmp.path(), &crate::dist_segment::http_plan(port, "connections = 3\nrequests = 11"));
    let server = fake(&certs, tmp.path(), Mode::Runs);
    let kc = kubeconfig(tmp.path(), server.port, &certs, &format!("    token: {TOKEN}"), false);
    let out = tmp.path().join("k8s");
    let o = apply(&kc, &plan, &out);
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("merged 2 segments (1 trial(s))"), "{stdout}");

    let st = server.state.lock().unwrap();
    assert!(
        st.requests
            .iter()
            .all(|r| r.authorization.as_deref() == Some(&format!("Bearer {TOKEN}"))),
        "every request carries the token"
    );
    // The objects applied, in order, are the files written (the merge Job is done here instead).
    let patches: Vec<&Req> = st.requests.iter().filter(|r| r.method == "PATCH").collect();
    let files = ["00-configmap.json", "01-results-claim.json", "02-load-job.json"];
    assert_eq!(patches.len(), files.len() + 1, "{patches:?}");
    for (r, f) in patches.iter().zip(files) {
        let file: Value = serde_json::from_str(&std::fs::read_to_string(out.join(f)).unwrap()).unwrap();
        assert_eq!(serde_json::from_slice::<Value>(&r.body).unwrap(), file, "{f}");
        assert_eq!(r.content_type.as_deref(), Some("application/apply-patch+yaml"));
        assert!(r.path.ends_with("?fieldManager=perflab&force=true"), "{}", r.path);
    }
    // Then the common start, in the ConfigMap beside the plan, a little ahead of the moment.
    let cm: Value = serde_json::from_slice(&patches[3].body).unwrap();
    let t0: f64 = cm["data"]["start-at"].as_str().unwrap().parse().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!(t0 > now - 60.0 && t0 < now, "T0 {t0}");
    assert_eq!(cm["data"]["plan.toml"], std::fs::read_to_string(&plan).unwrap());

    // The merged run's requests are the sum of the segments' (6 + 5 of 11), as the segments'
    // run directories collected from the logs say.
    let count = |dir: &Path| Store::open(dir).unwrap().trials().unwrap()[0].metric("requests").unwrap();
    let segments: Vec<f64> = (0..AGENTS).map(|i| count(&out.join(format!("segment-{i}")))).collect();
    assert_eq!(segments, [6.0, 5.0]);
    assert_eq!(count(&out.join("merged")), 11.0);
    let mark = Store::open(out.join("segment-1")).unwrap().segment().unwrap().unwrap();
    assert_eq!(mark.start_at_unix, Some(t0));
    assert!(out.join("merged/report.md").exists());
}

#[test]
fn a_refused_job_an_exec_plugin_and_no_server_are_one_line_each() {
    let Some(certs) = Certs::make() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let plan = write_plan(tmp.path(), &crate::dist_segment::http_plan(9, "requests = 2"));
    let server = fake(&certs, tmp.path(), Mode::ForbidJobs);
    let one_line = |o: &std::process::Output, code: i32, words: &[&str]| {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        for w in words {
            assert!(err.contains(w), "{w:?} in {err}");
        }
    };
    // 403 on the Job (trusting the server with insecure-skip-tls-verify): the verb and resource.
    let kc = kubeconfig(tmp.path(), server.port, &certs, &format!("    token: {TOKEN}"), true);
    let o = apply(&kc, &plan, &tmp.path().join("a"));
    one_line(&o, 1, &["context fake may not apply jobs in namespace load (403 Forbidden)"]);
    assert!(!server.state.lock().unwrap().requests.iter().any(|r| r.method == "DELETE"));

    let exec = "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: aws-iam-authenticator";
    let kc = kubeconfig(tmp.path(), server.port, &certs, exec, false);
    let o = apply(&kc, &plan, &tmp.path().join("b"));
    one_line(&o, 2, &["exec plugin (aws-iam-authenticator)", "token"]);

    let kc = kubeconfig(tmp.path(), free_port(), &certs, &format!("    token: {TOKEN}"), false);
    let o = apply(&kc, &plan, &tmp.path().join("c"));
    one_line(&o, 1, &["cannot reach the Kubernetes API server https://localhost:"]);
}

#[test]
fn a_pod_that_cannot_start_is_named_and_ctrl_c_deletes_the_job() {
    let Some(certs) = Certs::make() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let plan = write_plan(tmp.path(), &crate::dist_segment::http_plan(9, "requests = 2"));
    let token = format!("    token: {TOKEN}");
    let deleted = |s: &Fake| s.state.lock().unwrap().requests.iter().any(|r| r.method == "DELETE");

    let server = fake(&certs, tmp.path(), Mode::Pending("ImagePullBackOff"));
    let kc = kubeconfig(tmp.path(), server.port, &certs, &token, false);
    let o = apply(&kc, &plan, &tmp.path().join("a"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("pod perflab-split-0-x7k2p is Pending (ImagePullBackOff: fake: no such image)"),
        "{err}"
    );
    assert!(deleted(&server), "the Job of pods that cannot start is deleted");
    drop(server);

    let server = fake(&certs, tmp.path(), Mode::Pending(""));
    let kc = kubeconfig(tmp.path(), server.port, &certs, &token, false);
    let child = apply_cmd(&kc, &plan, &tmp.path().join("b"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Bounded: the pods are listed within seconds of the start.
    for _ in 0..400 {
        if server.state.lock().unwrap().requests.iter().any(|r| r.path.contains("/pods?")) {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted: deleted job perflab-split in namespace load"), "{err}");
    assert!(deleted(&server));
}
