//! `perflab dist slurm|k8s`: the engines' arguments, checks, and what is printed.

use super::{k8s, slurm};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct DistArgs {
    #[command(subcommand)]
    pub engine: Engine,
}

#[derive(clap::Subcommand, Debug)]
pub enum Engine {
    /// Write the sbatch script that runs the plan's load from N nodes, one segment each, and merges them
    Slurm(SlurmArgs),
    /// Write the Kubernetes objects (an Indexed Job, its ConfigMap, a results claim, the merge Job)
    /// that run the plan's load from N pods, one segment each
    K8s(K8sArgs),
}

#[derive(clap::Args, Debug)]
pub struct SlurmArgs {
    /// The plan file
    pub plan: PathBuf,
    /// How many nodes, one segment each
    #[arg(long, short = 'N')]
    pub nodes: u32,
    /// A directory every node shares: the plan's copy, the segments' stores, the merged run
    /// (default: ./perflab-dist-PLAN_NAME)
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// How far ahead of the job's start the segments begin together
    #[arg(long, default_value = "30s", value_parser = crate::util::duration::parse)]
    pub start_in: std::time::Duration,
    /// A segment that begins later than this after the common start runs nothing
    #[arg(long, default_value = "500ms", value_parser = crate::util::duration::parse)]
    pub start_tolerance: std::time::Duration,
    /// The perflab program on the nodes
    #[arg(long, default_value = "perflab")]
    pub perflab: String,
    /// An sbatch option for the script's header (repeat it): --sbatch=--partition=debug
    #[arg(long, value_name = "OPTION", allow_hyphen_values = true)]
    pub sbatch: Vec<String>,
    /// Submit the script with `sbatch --wait` and return its exit code
    #[arg(long)]
    pub submit: bool,
}

#[derive(clap::Args, Debug)]
pub struct K8sArgs {
    /// The plan file
    pub plan: PathBuf,
    /// How many pods, one segment each (spread over the nodes)
    #[arg(long)]
    pub agents: u32,
    /// The container image with perflab (the repository's Containerfile builds one)
    #[arg(long)]
    pub image: String,
    /// The namespace of the objects (default: kubectl's current one)
    #[arg(long)]
    pub namespace: Option<String>,
    /// The common start (Unix seconds or RFC 3339); without it, set `start-at` in the ConfigMap
    /// once every pod runs
    #[arg(long, value_name = "T0")]
    pub start_at: Option<String>,
    /// How long a pod waits for the common start before it gives up (exit code 4); with --apply
    /// also how long the pods may take to all run
    #[arg(long, default_value = "10m", value_parser = crate::util::duration::parse)]
    pub wait: std::time::Duration,
    /// A segment that begins later than this after the common start runs nothing
    #[arg(long, default_value = "500ms", value_parser = crate::util::duration::parse)]
    pub start_tolerance: std::time::Duration,
    /// A ReadWriteMany PersistentVolumeClaim of yours for the segments' stores (default: one is written)
    #[arg(long, value_name = "NAME")]
    pub claim: Option<String>,
    /// The size of the claim written when --claim is not given
    #[arg(long, default_value = "1Gi")]
    pub storage: String,
    /// Where to write the objects, one JSON file each (default: ./perflab-k8s-PLAN_NAME); with
    /// --apply also the segments' run directories (segment-I) and the merged run (merged)
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// Apply the objects with your kubeconfig ($KUBECONFIG or ~/.kube/config), wait (up to --wait)
    /// for the pods to run, publish the common start, follow the Job, read each segment's run from
    /// its pod's log and merge them into OUT/merged
    #[arg(long)]
    pub apply: bool,
    /// The kubeconfig context to use with --apply (default: its current context)
    #[arg(long, requires = "apply")]
    pub context: Option<String>,
    /// With --apply: how long after every pod runs the common start is (the kubelet takes up to
    /// about a minute to show a ConfigMap's change to the pods)
    #[arg(long, default_value = "90s", value_parser = crate::util::duration::parse, requires = "apply")]
    pub start_in: std::time::Duration,
}

pub fn run(a: DistArgs) -> anyhow::Result<i32> {
    match a.engine {
        Engine::Slurm(a) => run_slurm(a),
        Engine::K8s(a) => run_k8s(a),
    }
}

fn run_slurm(a: SlurmArgs) -> anyhow::Result<i32> {
    let plan = super::check(&a.plan, a.nodes)?;
    let dir = a
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("perflab-dist-{}", super::dns_label(&plan.name, 40))));
    let dir = std::path::absolute(&dir).map_err(|e| crate::error::usage(format!("--dir {}: {e}", dir.display())))?;
    let settings = slurm::Settings {
        nodes: a.nodes,
        dir: &dir,
        start_in: a.start_in,
        tolerance: a.start_tolerance,
        perflab: &a.perflab,
        sbatch: &a.sbatch,
    };
    let script = slurm::write(&plan, &settings)?;
    println!(
        "wrote {} (the plan copied to {})",
        script.display(),
        dir.join("plan.toml").display()
    );
    if !a.submit {
        println!("submit it with: sbatch --wait {}", script.display());
        println!("the merged run will be {}", dir.join("merged").display());
        return Ok(0);
    }
    slurm::submit(&script, &dir)
}

fn run_k8s(a: K8sArgs) -> anyhow::Result<i32> {
    if let Some(t0) = &a.start_at {
        crate::runner::segment::parse_start_at(t0).map_err(crate::error::usage)?;
    }
    if a.image.trim().is_empty() {
        return Err(crate::error::usage("--image is empty: give the container image with perflab"));
    }
    if a.apply && a.start_at.is_some() {
        return Err(crate::error::usage(
            "--start-at and --apply do not go together: --apply publishes the common start once every pod runs (--start-in)",
        ));
    }
    let plan = super::check(&a.plan, a.agents)?;
    // The kubeconfig is read before anything is written or sent.
    let target = if a.apply {
        Some(super::kubeconfig::load(a.context.as_deref())?)
    } else {
        None
    };
    let settings = k8s::Settings {
        agents: a.agents,
        image: &a.image,
        namespace: a.namespace.as_deref(),
        start_at: a.start_at.as_deref(),
        wait: a.wait,
        tolerance: a.start_tolerance,
        claim: a.claim.as_deref(),
        storage: &a.storage,
    };
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("perflab-k8s-{}", super::dns_label(&plan.name, 40))));
    let paths = k8s::write(&plan, &settings, &dir)?;
    for p in &paths {
        println!("wrote {}", p.display());
    }
    let name = format!("perflab-{}", super::dns_label(&plan.name, 40));
    if let Some(target) = target {
        let options = super::apply::Options {
            name: &name,
            agents: a.agents,
            namespace: a.namespace.as_deref(),
            wait: a.wait,
            start_in: a.start_in,
            out: &dir,
            format: "md,html,json,csv",
        };
        return super::apply::run(&k8s::objects(&plan, &settings), target, &options);
    }
    let d = dir.display();
    let claim = if a.claim.is_none() {
        format!(" -f {d}/01-results-claim.json")
    } else {
        String::new()
    };
    println!("apply:   kubectl apply -f {d}/00-configmap.json{claim} -f {d}/02-load-job.json");
    if a.start_at.is_none() {
        println!(
            "start:   once the {} pods run, kubectl patch configmap {name} --type merge -p '{{\"data\":{{\"start-at\":\"'$(( $(date +%s) + 90 ))'\"}}}}'",
            a.agents
        );
    }
    println!(
        "merge:   kubectl wait --for=condition=complete --timeout=24h job/{name} && kubectl apply -f {}/03-merge-job.json",
        dir.display()
    );
    Ok(0)
}
