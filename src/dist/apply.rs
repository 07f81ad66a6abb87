//! `perflab dist k8s PLAN --apply`: the objects applied with the user's kubeconfig (server-side
//! apply, field manager `perflab`), the N pods waited for (bounded by `--wait`), the common start
//! published in the ConfigMap, the Job followed to its end, each segment's run directory read from
//! its pod's log (the pod ends by printing it, a gzip'd tar in base64 between two markers) and the
//! segments merged into one local run, as `perflab merge` does.

use super::kube_api::{Answer, Api};
use super::kubeconfig::Target;
use crate::util::Cancel;
use anyhow::bail;
use base64::Engine as _;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The markers around a segment's run directory in its pod's log.
pub const BEGIN: &str = "-----BEGIN PERFLAB RUN-----";
pub const END: &str = "-----END PERFLAB RUN-----";

const POLL: Duration = Duration::from_millis(500);

/// Container states in which a pod will not start by waiting longer.
const HOPELESS: [&str; 5] = [
    "ImagePullBackOff",
    "InvalidImageName",
    "ErrImageNeverPull",
    "CreateContainerConfigError",
    "CrashLoopBackOff",
];

pub struct Options<'a> {
    pub name: &'a str,
    pub agents: u32,
    pub namespace: Option<&'a str>,
    /// How long the pods may take to all run.
    pub wait: Duration,
    /// How far after the moment every pod runs the common start is.
    pub start_in: Duration,
    /// Where the segments' run directories and the merged run go.
    pub out: &'a Path,
    pub format: &'a str,
}

struct Kube {
    api: Api,
    ns: String,
}

impl Kube {
    fn path(&self, kind: &str, name: &str) -> String {
        let ns = &self.ns;
        match kind {
            "Job" => format!("/apis/batch/v1/namespaces/{ns}/jobs/{name}"),
            "PersistentVolumeClaim" => format!("/api/v1/namespaces/{ns}/persistentvolumeclaims/{name}"),
            "ConfigMap" => format!("/api/v1/namespaces/{ns}/configmaps/{name}"),
            _ => format!("/api/v1/namespaces/{ns}/{name}"),
        }
    }

    /// `verb resource` answered 2xx: its JSON; otherwise one line.
    fn expect(&self, a: Answer, verb: &str, resource: &str) -> anyhow::Result<Value> {
        let ctx = &self.api.target.context;
        let ns = &self.ns;
        match a.status {
            200..=299 => Ok(serde_json::from_slice(&a.body).unwrap_or(Value::Null)),
            401 => bail!(
                "the Kubernetes API server {} does not accept the credentials of context {ctx} (401 Unauthorized) to {verb} {resource}",
                self.api.target.server
            ),
            403 => bail!(
                "context {ctx} may not {verb} {resource} in namespace {ns} (403 Forbidden): ask for that right (RBAC) or use another --context"
            ),
            s => {
                let v: Value = serde_json::from_slice(&a.body).unwrap_or(Value::Null);
                let msg = v["message"].as_str().unwrap_or("no message");
                bail!("cannot {verb} {resource} in namespace {ns}: the API server answered {s}: {msg}")
            }
        }
    }

    fn get(&self, path: &str, resource: &str) -> anyhow::Result<Value> {
        let a = self.api.call("GET", path, None)?;
        self.expect(a, "get", resource)
    }

    /// Server-side apply of one object (created or updated).
    fn apply(&self, obj: &Value) -> anyhow::Result<()> {
        let kind = obj["kind"].as_str().unwrap_or("");
        let name = obj["metadata"]["name"].as_str().unwrap_or("");
        let path = format!("{}?fieldManager=perflab&force=true", self.path(kind, name));
        let body = serde_json::to_vec(obj)?;
        let a = self.api.call("PATCH", &path, Some(("application/apply-patch+yaml", &body)))?;
        self.expect(a, "apply", &resource_of(kind))?;
        Ok(())
    }

    fn pods(&self, name: &str) -> anyhow::Result<Vec<Pod>> {
        let v = self.get(
            &format!("/api/v1/namespaces/{}/pods?labelSelector=perflab%2Frun%3D{name}", self.ns),
            "pods",
        )?;
        Ok(v["items"].as_array().map(|a| a.iter().map(Pod::of).collect()).unwrap_or_default())
    }

    fn log(&self, pod: &str) -> anyhow::Result<String> {
        let a = self.api.call(
            "GET",
            &format!("/api/v1/namespaces/{}/pods/{pod}/log?container=segment", self.ns),
            None,
        )?;
        if (200..300).contains(&a.status) {
            Ok(String::from_utf8_lossy(&a.body).into_owned())
        } else {
            self.expect(a, "get", "pods/log").map(|_| String::new())
        }
    }

    fn delete_job(&self, name: &str) -> anyhow::Result<()> {
        let path = format!("{}?propagationPolicy=Background", self.path("Job", name));
        let a = self.api.call("DELETE", &path, None)?;
        if a.status != 404 {
            self.expect(a, "delete", "jobs")?;
        }
        Ok(())
    }
}

fn resource_of(kind: &str) -> String {
    match kind {
        "PersistentVolumeClaim" => "persistentvolumeclaims".into(),
        k => format!("{}s", k.to_ascii_lowercase()),
    }
}

/// What `--apply` needs of a pod.
struct Pod {
    name: String,
    index: Option<u32>,
    phase: String,
    /// Why it is not running: a container's waiting reason (and message), or why it is not
    /// scheduled.
    why: Option<(String, String)>,
    exit_code: Option<i64>,
}

impl Pod {
    fn of(v: &Value) -> Pod {
        let key = "batch.kubernetes.io/job-completion-index";
        let meta = &v["metadata"];
        let index = meta["annotations"][key]
            .as_str()
            .or(meta["labels"][key].as_str())
            .and_then(|i| i.parse().ok());
        let status = &v["status"];
        let statuses = status["containerStatuses"].as_array().cloned().unwrap_or_default();
        let waiting = statuses.iter().find_map(|c| {
            let w = &c["state"]["waiting"];
            w["reason"]
                .as_str()
                .map(|r| (r.to_string(), w["message"].as_str().unwrap_or("").to_string()))
        });
        let unscheduled = status["conditions"].as_array().and_then(|cs| {
            cs.iter().find(|c| c["type"] == "PodScheduled" && c["status"] == "False").map(|c| {
                (
                    c["reason"].as_str().unwrap_or("Unschedulable").to_string(),
                    c["message"].as_str().unwrap_or("").to_string(),
                )
            })
        });
        Pod {
            name: meta["name"].as_str().unwrap_or("?").to_string(),
            index,
            phase: status["phase"].as_str().unwrap_or("Pending").to_string(),
            why: waiting.or(unscheduled),
            exit_code: statuses.iter().find_map(|c| c["state"]["terminated"]["exitCode"].as_i64()),
        }
    }

    fn state(&self) -> String {
        match &self.why {
            Some((r, m)) if m.is_empty() => format!("{} ({r})", self.phase),
            Some((r, m)) => format!("{} ({r}: {m})", self.phase),
            None => self.phase.clone(),
        }
    }
}

/// Apply, wait, start, follow, collect and merge: the exit code.
pub fn run(objects: &[(String, Value)], target: Target, o: &Options) -> anyhow::Result<i32> {
    let cancel = Cancel::on_signals_hurrying()?;
    let ns = o.namespace.map_or_else(|| target.namespace.clone(), str::to_string);
    let k = Kube {
        api: Api::new(target)?,
        ns,
    };
    let merged = o.out.join("merged");
    if merged.exists() {
        return Err(crate::error::usage(format!(
            "{} exists (an earlier --apply): give another --out",
            merged.display()
        )));
    }
    let job = k.api.call("GET", &k.path("Job", o.name), None)?;
    if job.status != 404 {
        k.expect(job, "get", "jobs")?;
        bail!(
            "job {} already exists in namespace {} (an earlier run): delete it first (kubectl delete job {} -n {})",
            o.name,
            k.ns,
            o.name,
            k.ns
        );
    }
    let applied: Vec<&Value> = objects.iter().filter(|(f, _)| !f.starts_with("03-")).map(|(_, v)| v).collect();
    for obj in &applied {
        k.apply(obj)?;
        println!(
            "applied {} {} (namespace {})",
            obj["kind"].as_str().unwrap_or("?"),
            obj["metadata"]["name"].as_str().unwrap_or("?"),
            k.ns
        );
    }
    let outcome = follow(&k, o, &applied, &cancel);
    if cancel.is_cancelled() {
        let deleted = k.delete_job(o.name);
        eprintln!(
            "perflab: interrupted: {} job {} in namespace {}",
            if deleted.is_ok() { "deleted" } else { "could not delete" },
            o.name,
            k.ns
        );
        return Ok(130);
    }
    outcome
}

fn follow(k: &Kube, o: &Options, applied: &[&Value], cancel: &Cancel) -> anyhow::Result<i32> {
    if !wait_running(k, o, cancel)? {
        return Ok(130);
    }
    // The common start: whole seconds, `start_in` after every pod runs (the kubelet carries a
    // ConfigMap's change into the pods' volumes within about a minute).
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?;
    let t0 = (now + o.start_in).as_secs() + 1;
    let mut config = applied
        .iter()
        .find(|v| v["kind"] == "ConfigMap")
        .map(|v| (*v).clone())
        .ok_or_else(|| anyhow::anyhow!("no ConfigMap among the objects"))?;
    config["data"]["start-at"] = Value::String(t0.to_string());
    k.apply(&config)?;
    println!("published the common start {t0} (Unix seconds) in configmap {}", o.name);
    if !wait_complete(k, o, cancel)? {
        return Ok(130);
    }
    let runs = collect(k, o)?;
    println!("collected {} segments into {}", runs.len(), o.out.display());
    super::cli::run(super::cli::MergeArgs {
        runs,
        out: o.out.join("merged"),
        format: o.format.to_string(),
        allow_partial: false,
    })
}

/// Until every segment's pod runs (true), `--wait` passes or a pod cannot start (an error), or
/// Ctrl-C (false).
fn wait_running(k: &Kube, o: &Options, cancel: &Cancel) -> anyhow::Result<bool> {
    let deadline = Instant::now() + o.wait;
    let mut said = 0;
    loop {
        let pods = k.pods(o.name)?;
        let running = pods.iter().filter(|p| p.phase == "Running").count();
        if running != said {
            println!("{running} of {} pods running", o.agents);
            said = running;
        }
        if running >= o.agents as usize {
            return Ok(true);
        }
        let stuck = |p: &Pod| format!("pod {} is {}", p.name, p.state());
        if let Some(p) = pods
            .iter()
            .find(|p| p.why.as_ref().is_some_and(|(r, _)| HOPELESS.contains(&r.as_str())))
        {
            let _ = k.delete_job(o.name);
            bail!("{}: it will not start (deleted job {})", stuck(p), o.name);
        }
        if let Some(p) = pods.iter().find(|p| p.phase == "Failed" || p.phase == "Succeeded") {
            let _ = k.delete_job(o.name);
            bail!(
                "pod {} ended before the common start ({}; deleted job {})",
                p.name,
                p.state(),
                o.name
            );
        }
        if Instant::now() >= deadline {
            let _ = k.delete_job(o.name);
            let which = pods
                .iter()
                .find(|p| p.phase != "Running")
                .map_or_else(|| format!("{} pods exist", pods.len()), stuck);
            bail!(
                "only {running} of {} pods run after --wait {}: {which} (deleted job {})",
                o.agents,
                humantime::format_duration(o.wait),
                o.name
            );
        }
        if cancel.sleep(POLL) {
            return Ok(false);
        }
    }
}

/// Until the Job completes (true) or Ctrl-C (false); a failed segment is an error naming it.
fn wait_complete(k: &Kube, o: &Options, cancel: &Cancel) -> anyhow::Result<bool> {
    loop {
        let job = k.api.call("GET", &k.path("Job", o.name), None)?;
        if job.status == 404 {
            bail!("job {} was deleted in namespace {} before it completed", o.name, k.ns);
        }
        let job = k.expect(job, "get", "jobs")?;
        let status = &job["status"];
        let failed = status["failedIndexes"].as_str().unwrap_or("").to_string();
        let condition = |t: &str| {
            status["conditions"]
                .as_array()
                .is_some_and(|cs| cs.iter().any(|c| c["type"] == t && c["status"] == "True"))
        };
        if !failed.is_empty() || condition("Failed") {
            return Err(segment_failed(k, o, &failed));
        }
        if condition("Complete") {
            return Ok(true);
        }
        if cancel.sleep(POLL) {
            return Ok(false);
        }
    }
}

/// One line naming the first failed segment, its pod and the last thing it said.
fn segment_failed(k: &Kube, o: &Options, failed: &str) -> anyhow::Error {
    let first: Option<u32> = failed.split([',', '-']).next().and_then(|i| i.trim().parse().ok());
    let pods = k.pods(o.name).unwrap_or_default();
    let pod = pods.iter().find(|p| p.phase == "Failed" && (first.is_none() || p.index == first));
    let Some(pod) = pod else {
        return anyhow::anyhow!("job {} failed in namespace {} (segments {failed})", o.name, k.ns);
    };
    let said = k.log(&pod.name).ok().and_then(|l| last_words(&l)).unwrap_or_default();
    let segment = pod
        .index
        .map_or_else(|| "a segment".to_string(), |i| format!("segment {i}/{}", o.agents));
    let code = pod.exit_code.map_or(String::new(), |c| format!(", exit code {c}"));
    anyhow::anyhow!(
        "{segment} failed (pod {}{code}){}{said}; the job is kept for `kubectl logs`: kubectl delete job {} -n {}",
        pod.name,
        if said.is_empty() { "" } else { ": " },
        o.name,
        k.ns
    )
}

/// The last line a pod printed before its run directory.
fn last_words(log: &str) -> Option<String> {
    log.split(BEGIN)
        .next()?
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(|l| l.trim_start_matches("perflab: ").to_string())
}

/// Each segment's run directory, read from its pod's log into `out/segment-i`.
fn collect(k: &Kube, o: &Options) -> anyhow::Result<Vec<PathBuf>> {
    let pods = k.pods(o.name)?;
    let mut runs = Vec::new();
    for i in 0..o.agents {
        let pod = pods
            .iter()
            .find(|p| p.index == Some(i) && p.phase == "Succeeded")
            .ok_or_else(|| anyhow::anyhow!("segment {i}/{}: no pod of job {} succeeded with it", o.agents, o.name))?;
        let log = k.log(&pod.name)?;
        let dir = o.out.join(format!("segment-{i}"));
        unpack(&log, &dir).map_err(|why| anyhow::anyhow!("segment {i}/{} (pod {}): {why}", o.agents, pod.name))?;
        runs.push(dir);
    }
    Ok(runs)
}

/// The run directory between the markers of `log`, unpacked into `dir` (made anew).
pub fn unpack(log: &str, dir: &Path) -> Result<(), String> {
    let start = log
        .find(BEGIN)
        .ok_or("its log holds no run directory (it printed no start marker)")?;
    let rest = &log[start + BEGIN.len()..];
    let end = rest
        .find(END)
        .ok_or("its log ends inside its run directory: the kubelet keeps 10 MiB of a container's log by default (containerLogMaxSize)")?;
    let text: String = rest[..end].chars().filter(|c| !c.is_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|_| "its run directory in the log is not base64")?;
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes.as_slice()));
    archive.unpack(dir).map_err(|_| {
        format!(
            "its run directory in the log is not a gzip'd tar (unpacking into {})",
            dir.display()
        )
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_log_cut_short_or_without_a_run_is_named_and_the_last_words_are_found() {
        let dir = std::env::temp_dir().join(format!("perflab-unpack-{}", std::process::id()));
        let cut = format!("started\n{}\nH4sIAAAA\n", super::BEGIN);
        assert!(super::unpack(&cut, &dir).unwrap_err().contains("containerLogMaxSize"));
        assert!(super::unpack("perflab: error: x\n", &dir).unwrap_err().contains("no start marker"));
        let junk = format!("{}\n!!!\n{}\n", super::BEGIN, super::END);
        assert!(super::unpack(&junk, &dir).unwrap_err().contains("not base64"));
        assert!(!dir.exists(), "nothing is unpacked from a bad log");
        let log = format!(
            "perflab: error: segment 1/2 began 2.1 s after T0\n\n{}\nAAAA\n{}\n",
            super::BEGIN,
            super::END
        );
        assert_eq!(super::last_words(&log).as_deref(), Some("error: segment 1/2 began 2.1 s after T0"));
    }
}
