//! The user's kubeconfig, as kubectl reads it: `$KUBECONFIG` (a `:`-separated list, the first
//! file to name an entry wins) or `~/.kube/config`; the current context or `--context`; the
//! cluster's server, its certificate authority (a file or `-data`) or `insecure-skip-tls-verify`;
//! the user's client certificate and key (files or `-data`) or bearer token (`token`,
//! `tokenFile`). An `exec` or `auth-provider` credential plugin is refused in one line naming the
//! workaround (a token). Relative file paths are relative to the kubeconfig that names them.

use base64::Engine as _;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Deserialize, Default)]
struct File {
    #[serde(default)]
    clusters: Vec<Named<ClusterEntry>>,
    #[serde(default)]
    users: Vec<Named<UserEntry>>,
    #[serde(default)]
    contexts: Vec<Named<ContextEntry>>,
    #[serde(default, rename = "current-context")]
    current_context: Option<String>,
}

#[derive(Deserialize)]
struct Named<T> {
    name: String,
    #[serde(flatten)]
    item: T,
}

#[derive(Deserialize, Clone)]
struct ClusterEntry {
    cluster: Cluster,
}

#[derive(Deserialize, Clone)]
struct UserEntry {
    #[serde(default)]
    user: User,
}

#[derive(Deserialize, Clone)]
struct ContextEntry {
    context: Context,
}

#[derive(Deserialize, Clone)]
#[serde(rename_all = "kebab-case")]
struct Cluster {
    server: String,
    certificate_authority: Option<String>,
    certificate_authority_data: Option<String>,
    #[serde(default)]
    insecure_skip_tls_verify: bool,
}

#[derive(Deserialize, Clone, Default)]
#[serde(rename_all = "kebab-case")]
struct User {
    client_certificate: Option<String>,
    client_certificate_data: Option<String>,
    client_key: Option<String>,
    client_key_data: Option<String>,
    token: Option<String>,
    #[serde(rename = "tokenFile")]
    token_file: Option<String>,
    exec: Option<serde_norway::Value>,
    auth_provider: Option<serde_norway::Value>,
}

#[derive(Deserialize, Clone)]
struct Context {
    cluster: String,
    #[serde(default)]
    user: String,
    namespace: Option<String>,
}

/// Where and how to reach the API server, from one context.
pub struct Target {
    /// The context's name, for messages.
    pub context: String,
    /// `https://host:port` (perhaps with a path prefix).
    pub server: String,
    /// The context's namespace, or `default`.
    pub namespace: String,
    /// The certificate authority (PEM); None: the system's web roots.
    pub ca: Option<Vec<u8>>,
    pub insecure: bool,
    /// The client certificate chain and its key (PEM).
    pub client: Option<(Vec<u8>, Vec<u8>)>,
    pub token: Option<String>,
}

/// The kubeconfig files kubectl would read.
fn paths() -> anyhow::Result<Vec<PathBuf>> {
    if let Some(v) = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
        return Ok(std::env::split_paths(&v).filter(|p| !p.as_os_str().is_empty()).collect());
    }
    let home = std::env::var_os("HOME").ok_or_else(|| crate::error::usage("no kubeconfig: set KUBECONFIG or HOME (~/.kube/config)"))?;
    Ok(vec![Path::new(&home).join(".kube/config")])
}

fn read(path: &Path) -> anyhow::Result<File> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| crate::error::usage(format!("kubeconfig {}: cannot read it ({})", path.display(), io_words(&e))))?;
    serde_norway::from_str(&text).map_err(|e| {
        let at = e.location().map_or(String::new(), |l| format!(":{}:{}", l.line(), l.column()));
        crate::error::usage(format!(
            "kubeconfig {}{at}: not a kubeconfig (YAML with clusters, users and contexts)",
            path.display()
        ))
    })
}

/// The target of `context` (default: the current context).
pub fn load(context: Option<&str>) -> anyhow::Result<Target> {
    let paths = paths()?;
    let mut files = Vec::new();
    for p in &paths {
        // As kubectl: a missing file of a list is skipped; the only one must be there.
        if paths.len() > 1 && !p.exists() {
            continue;
        }
        files.push((p.clone(), read(p)?));
    }
    let shown = paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(":");
    let name = match context {
        Some(c) => c.to_string(),
        None => files
            .iter()
            .find_map(|(_, f)| f.current_context.clone().filter(|c| !c.is_empty()))
            .ok_or_else(|| crate::error::usage(format!("kubeconfig {shown} has no current-context: give --context")))?,
    };
    let (ctx, _) = find(&files, |f| &f.contexts, &name).ok_or_else(|| {
        let known: Vec<&str> = files.iter().flat_map(|(_, f)| f.contexts.iter().map(|c| c.name.as_str())).collect();
        crate::error::usage(format!(
            "context {name} is not in kubeconfig {shown} (it has: {})",
            if known.is_empty() { "none".to_string() } else { known.join(", ") }
        ))
    })?;
    let ctx = ctx.context;
    let (cluster, cluster_file) = find(&files, |f| &f.clusters, &ctx.cluster)
        .ok_or_else(|| crate::error::usage(format!("cluster {} of context {name} is not in kubeconfig {shown}", ctx.cluster)))?;
    let cluster = cluster.cluster;
    let user = if ctx.user.is_empty() {
        (User::default(), cluster_file.clone())
    } else {
        let (u, f) = find(&files, |f| &f.users, &ctx.user)
            .ok_or_else(|| crate::error::usage(format!("user {} of context {name} is not in kubeconfig {shown}", ctx.user)))?;
        (u.user, f)
    };
    target(&name, &ctx, cluster, &cluster_file, user)
}

fn find<T: Clone>(files: &[(PathBuf, File)], list: fn(&File) -> &Vec<Named<T>>, name: &str) -> Option<(T, PathBuf)> {
    files
        .iter()
        .find_map(|(p, f)| list(f).iter().find(|e| e.name == name).map(|e| (e.item.clone(), p.clone())))
}

fn target(name: &str, ctx: &Context, cluster: Cluster, cfile: &Path, (user, ufile): (User, PathBuf)) -> anyhow::Result<Target> {
    if let Some(exec) = &user.exec {
        let cmd = exec.get("command").and_then(|c| c.as_str()).unwrap_or("a program");
        return Err(crate::error::usage(format!(
            "user {} of context {name} gets its credentials from an exec plugin ({cmd}), which perflab does not run: \
             give that user a token instead (`token:` or `tokenFile:`, e.g. from `kubectl create token SERVICEACCOUNT`)",
            ctx.user
        )));
    }
    if user.auth_provider.is_some() {
        return Err(crate::error::usage(format!(
            "user {} of context {name} uses an auth-provider plugin, which perflab does not run: give that user a token instead (`token:` or `tokenFile:`)",
            ctx.user
        )));
    }
    let ca = pem(
        cluster.certificate_authority_data.as_deref(),
        cluster.certificate_authority.as_deref(),
        cfile,
        "certificate-authority",
    )?;
    let cert = pem(
        user.client_certificate_data.as_deref(),
        user.client_certificate.as_deref(),
        &ufile,
        "client-certificate",
    )?;
    let key = pem(user.client_key_data.as_deref(), user.client_key.as_deref(), &ufile, "client-key")?;
    let client = match (cert, key) {
        (Some(c), Some(k)) => Some((c, k)),
        (None, None) => None,
        _ => {
            return Err(crate::error::usage(format!(
                "user {} of context {name} has a client certificate without its key (or a key without its certificate)",
                ctx.user
            )))
        }
    };
    let token = match (user.token, user.token_file) {
        (Some(t), _) => Some(t.trim().to_string()),
        (None, Some(f)) => Some(
            std::fs::read_to_string(relative(&ufile, &f))
                .map_err(|e| crate::error::usage(format!("tokenFile {f} of user {}: cannot read it ({})", ctx.user, io_words(&e))))?
                .trim()
                .to_string(),
        ),
        (None, None) => None,
    };
    Ok(Target {
        context: name.to_string(),
        server: cluster.server.trim_end_matches('/').to_string(),
        namespace: ctx.namespace.clone().filter(|n| !n.is_empty()).unwrap_or_else(|| "default".into()),
        ca,
        insecure: cluster.insecure_skip_tls_verify,
        client,
        token,
    })
}

fn relative(file: &Path, p: &str) -> PathBuf {
    let p = Path::new(p);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        file.parent().unwrap_or(Path::new(".")).join(p)
    }
}

/// A PEM from `-data` (base64 of the PEM) or from a file.
fn pem(data: Option<&str>, file: Option<&str>, kubeconfig: &Path, what: &str) -> anyhow::Result<Option<Vec<u8>>> {
    if let Some(d) = data {
        let clean: String = d.chars().filter(|c| !c.is_whitespace()).collect();
        return base64::engine::general_purpose::STANDARD
            .decode(clean)
            .map(Some)
            .map_err(|_| crate::error::usage(format!("kubeconfig {}: {what}-data is not base64", kubeconfig.display())));
    }
    match file {
        None => Ok(None),
        Some(f) => std::fs::read(relative(kubeconfig, f)).map(Some).map_err(|e| {
            crate::error::usage(format!(
                "{what} {f} (kubeconfig {}): cannot read it ({})",
                kubeconfig.display(),
                io_words(&e)
            ))
        }),
    }
}

/// An I/O error in words, without the OS's error number.
pub(super) fn io_words(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => {
            let t = e.to_string();
            t.split(" (os error").next().unwrap_or(&t).to_string()
        }
    }
}
