//! `perflab hosts install`: copy the running binary over ssh into the host's per-version cache,
//! after checking that the host's architecture matches, and check the copy by its SHA-256.

use super::ssh;
use crate::plan::HostSpec;
use std::process::Stdio;

/// SHA-256 of a file, in hex.
pub fn sha256_file(path: &std::path::Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let d = ring::digest::digest(&ring::digest::SHA256, &bytes);
    Ok(d.as_ref().iter().map(|b| format!("{b:02x}")).collect())
}

/// `uname -m` as Rust names architectures.
fn rust_arch(uname: &str) -> &str {
    match uname {
        "arm64" | "aarch64_be" => "aarch64",
        "i686" | "i586" | "i386" => "x86",
        "amd64" => "x86_64",
        other => other,
    }
}

/// Run a short command on the host; its stdout, or why not.
fn remote(h: &HostSpec, script: &str, input: Option<&[u8]>) -> anyhow::Result<String> {
    use std::io::Write;
    let mut c = ssh::command(h, script);
    c.stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().map_err(|e| anyhow::anyhow!("host `{}`: cannot start ssh: {e}", h.name))?;
    if let (Some(data), Some(mut stdin)) = (input, child.stdin.take()) {
        // An error here shows in ssh's status and stderr.
        let _ = stdin.write_all(data);
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
        anyhow::bail!("host `{}`: {}", h.name, ssh::explain(last, out.status.code()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Install this binary on `h` (unless the same one is there). Returns what was done, for the user.
pub fn install(h: &HostSpec) -> anyhow::Result<String> {
    let exe = std::env::current_exe().map_err(|e| anyhow::anyhow!("cannot find the running perflab: {e}"))?;
    let sum = sha256_file(&exe)?;
    let dir = ssh::cache_dir();
    let probe = format!("uname -m; p=\"$HOME/{dir}/perflab\"; if [ -x \"$p\" ]; then sha256sum \"$p\" | cut -d' ' -f1; else echo none; fi");
    let said = remote(h, &probe, None)?;
    let mut lines = said.lines();
    let arch = lines.next().unwrap_or("").trim().to_string();
    let there = lines.next().unwrap_or("none").trim().to_string();
    if rust_arch(&arch) != std::env::consts::ARCH {
        anyhow::bail!(
            "host `{}` is {arch}, this perflab is built for {}: build perflab for {arch} and set the host's `perflab` key to it",
            h.name,
            std::env::consts::ARCH
        );
    }
    if there == sum {
        return Ok(format!(
            "{}: perflab {} already installed (~/{dir}/perflab)",
            h.name,
            env!("CARGO_PKG_VERSION")
        ));
    }
    let bytes = std::fs::read(&exe)?;
    let script = format!(
        "set -e; d=\"$HOME/{dir}\"; mkdir -p \"$d\"; cat > \"$d/perflab.part\"; chmod 755 \"$d/perflab.part\"; \
         s=$(sha256sum \"$d/perflab.part\" | cut -d' ' -f1); \
         if [ \"$s\" != {sum} ]; then rm -f \"$d/perflab.part\"; echo \"the copy's SHA-256 is $s, not {sum}\" >&2; exit 3; fi; \
         mv \"$d/perflab.part\" \"$d/perflab\""
    );
    remote(h, &script, Some(&bytes)).map_err(|e| anyhow::anyhow!("installing perflab: {e}"))?;
    Ok(format!(
        "{}: installed perflab {} into ~/{dir}/perflab ({} bytes, SHA-256 {})",
        h.name,
        env!("CARGO_PKG_VERSION"),
        bytes.len(),
        &sum[..16]
    ))
}
