//! The Kubernetes objects of `perflab dist k8s PLAN --agents N --image IMAGE`, built from typed
//! objects (the subset of the API's types they use, with the API's field names) and written as
//! JSON, one file per object, for `kubectl apply -f DIR`:
//!
//! - a ConfigMap with the plan (`plan.toml`) and, once known, the common start (`start-at`);
//! - a PersistentVolumeClaim (ReadWriteMany) the segments write their stores to, unless the user
//!   names a claim of their own;
//! - an Indexed Job: N completions, all at once, pods spread over nodes, no retry of a segment
//!   (`backoffLimitPerIndex: 0`: a retried segment would start late and count twice); each pod
//!   waits for `start-at` to appear in the ConfigMap (bounded), then runs its segment
//!   (`--segment auto` reads `JOB_COMPLETION_INDEX` of `PERFLAB_SEGMENTS`) and prints the run
//!   directory it made to its log, where `--apply` collects it (`apply.rs`);
//! - the merge Job, applied after the load Job completed: `perflab merge` over the claim.

use super::Checked;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

type Labels = BTreeMap<String, String>;

#[derive(Serialize, Clone, Default)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: Labels,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMap {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: ObjectMeta,
    pub data: BTreeMap<String, String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaim {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: ObjectMeta,
    pub spec: ClaimSpec,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimSpec {
    pub access_modes: Vec<String>,
    pub resources: Resources,
}

#[derive(Serialize)]
pub struct Resources {
    pub requests: BTreeMap<String, String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: ObjectMeta,
    pub spec: JobSpec,
}

#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct JobSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion_mode: Option<String>,
    pub completions: u32,
    pub parallelism: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backoff_limit_per_index: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backoff_limit: Option<u32>,
    pub template: PodTemplate,
}

#[derive(Serialize, Default)]
pub struct PodTemplate {
    pub metadata: ObjectMeta,
    pub spec: PodSpec,
}

#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    pub restart_policy: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub topology_spread_constraints: Vec<TopologySpread>,
    pub containers: Vec<Container>,
    pub volumes: Vec<Volume>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopologySpread {
    pub max_skew: u32,
    pub topology_key: String,
    pub when_unsatisfiable: String,
    pub label_selector: LabelSelector,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    pub match_labels: Labels,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    pub name: String,
    pub image: String,
    pub command: Vec<String>,
    pub env: Vec<EnvVar>,
    pub volume_mounts: Vec<VolumeMount>,
}

#[derive(Serialize)]
pub struct EnvVar {
    pub name: String,
    pub value: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeMount {
    pub name: String,
    pub mount_path: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Volume {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_map: Option<ConfigMapSource>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim: Option<ClaimSource>,
}

#[derive(Serialize)]
pub struct ConfigMapSource {
    pub name: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimSource {
    pub claim_name: String,
}

/// What the objects need besides the plan.
pub struct Settings<'a> {
    pub agents: u32,
    pub image: &'a str,
    pub namespace: Option<&'a str>,
    /// The common start when known now (Unix seconds or RFC 3339); otherwise set in the ConfigMap
    /// once every pod is running.
    pub start_at: Option<&'a str>,
    /// How long a pod waits for the common start before it gives up (exit code 4).
    pub wait: Duration,
    pub tolerance: Duration,
    /// A ReadWriteMany claim of the user's; None: one is written (`storage` big).
    pub claim: Option<&'a str>,
    pub storage: &'a str,
}

/// The objects, in the order to apply them: (file name, JSON).
pub fn objects(plan: &Checked, s: &Settings) -> Vec<(String, serde_json::Value)> {
    let name = format!("perflab-{}", super::dns_label(&plan.name, 40));
    let meta = |n: &str| ObjectMeta {
        name: n.to_string(),
        namespace: s.namespace.map(str::to_string),
        labels: [
            ("app.kubernetes.io/name".to_string(), "perflab".to_string()),
            ("perflab/run".to_string(), name.clone()),
        ]
        .into_iter()
        .collect(),
    };
    let mut data = BTreeMap::from([("plan.toml".to_string(), plan.source.clone())]);
    if let Some(t0) = s.start_at {
        data.insert("start-at".into(), t0.to_string());
    }
    let config = ConfigMap {
        api_version: "v1",
        kind: "ConfigMap",
        metadata: meta(&name),
        data,
    };
    let claim_name = s.claim.map_or_else(|| format!("{name}-results"), str::to_string);
    let mut out = vec![("00-configmap.json".to_string(), json(&config))];
    if s.claim.is_none() {
        let pvc = PersistentVolumeClaim {
            api_version: "v1",
            kind: "PersistentVolumeClaim",
            metadata: meta(&claim_name),
            spec: ClaimSpec {
                access_modes: vec!["ReadWriteMany".into()],
                resources: Resources {
                    requests: BTreeMap::from([("storage".to_string(), s.storage.to_string())]),
                },
            },
        };
        out.push(("01-results-claim.json".into(), json(&pvc)));
    }
    out.push(("02-load-job.json".into(), json(&load_job(&name, &claim_name, s, &meta))));
    out.push(("03-merge-job.json".into(), json(&merge_job(&name, &claim_name, s, &meta))));
    out
}

fn json<T: Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).expect("plain data serializes")
}

fn volumes(name: &str, claim: &str) -> (Vec<Volume>, Vec<VolumeMount>) {
    let vols = vec![
        Volume {
            name: "plan".into(),
            config_map: Some(ConfigMapSource { name: name.to_string() }),
            persistent_volume_claim: None,
        },
        Volume {
            name: "results".into(),
            config_map: None,
            persistent_volume_claim: Some(ClaimSource {
                claim_name: claim.to_string(),
            }),
        },
    ];
    let mounts = vec![
        VolumeMount {
            name: "plan".into(),
            mount_path: "/perflab".into(),
            read_only: true,
        },
        VolumeMount {
            name: "results".into(),
            mount_path: "/results".into(),
            read_only: false,
        },
    ];
    (vols, mounts)
}

/// The pod's shell: wait (bounded) for the common start in the ConfigMap, run the segment, then
/// print the run directory it made to the log (a gzip'd tar in base64 between two markers), where
/// `--apply` reads it.
fn segment_command(s: &Settings) -> Vec<String> {
    let script = format!(
        "i=0; while [ ! -s /perflab/start-at ] && [ \"$i\" -lt {wait} ]; do sleep 1; i=$((i+1)); done; \
         if [ ! -s /perflab/start-at ]; then echo \"perflab: no start-at in the ConfigMap after {wait}s\" >&2; exit 4; fi; \
         d=\"/results/segment-$JOB_COMPLETION_INDEX\"; \
         perflab run /perflab/plan.toml --segment auto --start-at \"$(cat /perflab/start-at)\" \
         --start-tolerance {tol}ms --quiet --runs-dir \"$d\"; rc=$?; \
         run=$(ls -td \"$d\"/*/ 2>/dev/null | head -n 1); \
         if [ \"$rc\" -le 1 ] && [ -n \"$run\" ]; then echo '{begin}'; tar -czf - -C \"$run\" . | base64; echo '{end}'; fi; \
         exit $rc",
        wait = s.wait.as_secs().max(1),
        tol = s.tolerance.as_millis().max(1),
        begin = super::apply::BEGIN,
        end = super::apply::END,
    );
    vec!["sh".into(), "-c".into(), script]
}

fn load_job(name: &str, claim: &str, s: &Settings, meta: &dyn Fn(&str) -> ObjectMeta) -> Job {
    let (volumes, volume_mounts) = volumes(name, claim);
    let pod_meta = meta("");
    let spread = TopologySpread {
        max_skew: 1,
        topology_key: "kubernetes.io/hostname".into(),
        when_unsatisfiable: "DoNotSchedule".into(),
        label_selector: LabelSelector {
            match_labels: pod_meta.labels.clone(),
        },
    };
    Job {
        api_version: "batch/v1",
        kind: "Job",
        metadata: meta(name),
        spec: JobSpec {
            completion_mode: Some("Indexed".into()),
            completions: s.agents,
            parallelism: s.agents,
            backoff_limit_per_index: Some(0),
            backoff_limit: None,
            template: PodTemplate {
                metadata: ObjectMeta {
                    name: String::new(),
                    namespace: None,
                    labels: pod_meta.labels,
                },
                spec: PodSpec {
                    restart_policy: "Never".into(),
                    topology_spread_constraints: vec![spread],
                    containers: vec![Container {
                        name: "segment".into(),
                        image: s.image.to_string(),
                        command: segment_command(s),
                        env: vec![EnvVar {
                            name: "PERFLAB_SEGMENTS".into(),
                            value: s.agents.to_string(),
                        }],
                        volume_mounts,
                    }],
                    volumes,
                },
            },
        },
    }
}

fn merge_job(name: &str, claim: &str, s: &Settings, meta: &dyn Fn(&str) -> ObjectMeta) -> Job {
    let (volumes, volume_mounts) = volumes(name, claim);
    let mut labels = meta("").labels;
    labels.insert("perflab/role".into(), "merge".into());
    Job {
        api_version: "batch/v1",
        kind: "Job",
        metadata: meta(&format!("{name}-merge")),
        spec: JobSpec {
            completion_mode: None,
            completions: 1,
            parallelism: 1,
            backoff_limit_per_index: None,
            backoff_limit: Some(0),
            template: PodTemplate {
                metadata: ObjectMeta {
                    name: String::new(),
                    namespace: None,
                    labels,
                },
                spec: PodSpec {
                    restart_policy: "Never".into(),
                    topology_spread_constraints: Vec::new(),
                    containers: vec![Container {
                        name: "merge".into(),
                        image: s.image.to_string(),
                        command: vec![
                            "sh".into(),
                            "-c".into(),
                            "exec perflab merge /results/segment-*/*/ --out /results/merged".into(),
                        ],
                        env: Vec::new(),
                        volume_mounts,
                    }],
                    volumes,
                },
            },
        },
    }
}

/// Write the objects into `dir`; their paths.
pub fn write(plan: &Checked, s: &Settings, dir: &std::path::Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
    use anyhow::Context;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut paths = Vec::new();
    for (file, value) in objects(plan, s) {
        let path = dir.join(file);
        let text = serde_json::to_string_pretty(&value).expect("JSON values print") + "\n";
        crate::util::fs::write_atomic(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        paths.push(path);
    }
    Ok(paths)
}
