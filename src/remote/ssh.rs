//! The transport: the system's OpenSSH client, in batch mode (no password prompt, no tty), with the
//! user's keys and `~/.ssh/config` as they are.

use crate::plan::HostSpec;
use std::process::Command;

/// Where `perflab hosts install` puts this version's binary on a host (relative to its home).
pub fn cache_dir() -> String {
    format!(".cache/perflab/{}", env!("CARGO_PKG_VERSION"))
}

/// `ssh -T -o BatchMode=yes [-p port] [-i identity] [-o opt]… destination -- REMOTE`.
pub fn command(h: &HostSpec, remote: &str) -> Command {
    let mut c = Command::new("ssh");
    c.args([
        "-T",
        "-o",
        "BatchMode=yes",
        "-o",
        "ConnectTimeout=10",
        "-o",
        "ServerAliveInterval=5",
        "-o",
        "ServerAliveCountMax=3",
    ]);
    if let Some(p) = h.port {
        c.arg("-p").arg(p.to_string());
    }
    if let Some(i) = &h.identity {
        c.arg("-i").arg(i);
    }
    for o in &h.ssh_options {
        c.arg("-o").arg(o);
    }
    c.arg("--").arg(&h.ssh).arg(remote);
    c
}

/// The remote shell command that starts the agent: the host's `perflab` key, else the per-version
/// cache, else `perflab` on the host's PATH.
pub fn agent_command(h: &HostSpec) -> String {
    match &h.perflab {
        Some(p) => format!("exec {} agent --stdio", quote(p)),
        None => format!(
            "p=\"$HOME/{}/perflab\"; [ -x \"$p\" ] || p=perflab; exec \"$p\" agent --stdio",
            cache_dir()
        ),
    }
}

/// A word for a POSIX shell, in single quotes.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// ssh's last line on stderr and its exit status, in the user's terms.
pub fn explain(last: &str, code: Option<i32>) -> String {
    let l = last.to_ascii_lowercase();
    let what = if l.contains("permission denied") {
        "ssh refused the login (the key is not accepted: check `identity` and the host's authorized_keys)"
    } else if l.contains("host key verification failed") {
        "ssh does not know the host's key (connect once by hand, or add it to known_hosts)"
    } else if l.contains("connection refused")
        || l.contains("no route to host")
        || l.contains("timed out")
        || l.contains("could not resolve")
        || l.contains("network is unreachable")
        || l.contains("name or service not known")
    {
        "unreachable"
    } else if code == Some(127) || l.contains("not found") || l.contains("no such file") {
        "perflab is not installed there (run `perflab hosts install PLAN`, or set the host's `perflab` key)"
    } else if code == Some(255) {
        "ssh failed"
    } else {
        "the connection to the agent was lost"
    };
    if last.is_empty() {
        format!("{what}{}", code.map(|c| format!(" (exit status {c})")).unwrap_or_default())
    } else {
        format!("{what}: {last}")
    }
}

/// Whether a channel that had been working ended because its agent did (killed, crashed), not
/// because ssh lost the connection: ssh exited by itself (`code`) and its last line on stderr is
/// not one of ssh's own. Then what to say: the agent ended, with that last line.
pub fn agent_ended(last: &str, code: Option<i32>) -> Option<String> {
    let code = code?;
    let l = last.to_ascii_lowercase();
    let ssh_says = l.starts_with("ssh:")
        || l.starts_with("client_loop:")
        || l.contains("closed by remote host")
        || l.contains("connection to ")
        || l.contains("not responding")
        || l.contains("broken pipe")
        || l.contains("connection reset")
        || l.contains("timed out");
    if ssh_says {
        return None;
    }
    let how = if code == 255 {
        "ssh's exit status 255: killed by a signal, or the connection went".to_string()
    } else {
        format!("exit status {code}")
    };
    Some(if last.is_empty() {
        format!("the perflab agent there ended ({how}), without a word on stderr")
    } else {
        format!("the perflab agent there ended ({how}); its last line on stderr: {last}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ssh_command_is_batch_mode_with_the_hosts_options() {
        let h = HostSpec {
            name: "server".into(),
            ssh: "root@10.0.0.2".into(),
            port: Some(2222),
            identity: Some("/k".into()),
            ssh_options: vec!["StrictHostKeyChecking=no".into()],
            perflab: Some("/opt/perflab it's".into()),
        };
        let c = command(&h, &agent_command(&h));
        let args: Vec<String> = c.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(c.get_program(), "ssh");
        assert!(args.windows(2).any(|w| w == ["-o", "BatchMode=yes"]));
        assert!(args.windows(2).any(|w| w == ["-p", "2222"]));
        assert!(args.windows(2).any(|w| w == ["-i", "/k"]));
        assert!(args.windows(2).any(|w| w == ["-o", "StrictHostKeyChecking=no"]));
        assert_eq!(args[args.len() - 2], "root@10.0.0.2");
        assert_eq!(args[args.len() - 1], "exec '/opt/perflab it'\\''s' agent --stdio");
    }

    #[test]
    fn sshs_failures_are_told_apart() {
        assert!(explain("root@x: Permission denied (publickey).", Some(255)).starts_with("ssh refused the login"));
        assert!(explain("ssh: connect to host 10.0.0.9 port 22: Connection refused", Some(255)).starts_with("unreachable"));
        assert!(explain("sh: 1: exec: perflab: not found", Some(127)).starts_with("perflab is not installed"));
    }

    #[test]
    fn an_agent_that_ended_is_told_from_a_lost_connection() {
        let why = agent_ended("", Some(255)).expect("the agent ended");
        assert!(
            why.starts_with("the perflab agent there ended") && why.contains("without a word"),
            "{why}"
        );
        let why = agent_ended("thread 'main' panicked at src/agent/mod.rs:1:1", Some(101)).expect("a crash");
        assert!(why.contains("exit status 101") && why.contains("panicked"), "{why}");
        assert_eq!(agent_ended("Connection to 10.0.0.2 closed by remote host.", Some(255)), None);
        assert_eq!(agent_ended("client_loop: send disconnect: Broken pipe", Some(255)), None);
        assert_eq!(agent_ended("", None), None, "ssh itself was killed");
    }
}
