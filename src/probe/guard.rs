//! The command probe's guard: its commands die with perflab, even by SIGKILL, the whole group.
//!
//! `PR_SET_PDEATHSIG` takes only the process perflab started (`sh`), not what that started in turn
//! (`sh -c 'sleep 100'` forks the `sleep`). The guard is a small shell, in a process group of its
//! own, that outlives perflab: perflab writes `+PGID` on its stdin when a command starts and `-PGID`
//! once it has ended; when the pipe ends (perflab exited or died), the guard SIGKILLs every group
//! still listed. It costs one short write when a command starts and one when it ends, and the
//! guard's read of each.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};

/// The guard's script: where awk is, awk keeps the group ids (it reads the pipe a block at a
/// time, where the shell's `read` takes a system call per byte); else a list kept in `g`
/// (" 12 34 "), emptied as they end. The signals ignored here stay ignored in awk.
const SCRIPT: &str = r#"trap '' INT HUP TERM
command -v awk >/dev/null 2>&1 && exec awk '
/^[+]/ { g[substr($0, 2)] = 1 }
/^-/ { delete g[substr($0, 2)] }
END { for (p in g) system("kill -s KILL -- -" p " 2>/dev/null") }'
g=' '
while read -r l; do
  case $l in
    +*) g="$g${l#+} " ;;
    -*) x=${l#-}; pre=${g%% $x *}; post=${g#* $x }; g="$pre $post" ;;
  esac
done
for p in $g; do kill -s KILL -- "-$p" 2>/dev/null; done
"#;

pub(crate) struct Guard {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Guard {
    /// Start the guard; None when `sh` cannot be started (the commands then rely on
    /// `PR_SET_PDEATHSIG` alone).
    pub fn start() -> Option<Guard> {
        let mut child = Command::new("sh")
            .args(["-c", SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .ok()?;
        let stdin = child.stdin.take();
        Some(Guard { child, stdin })
    }

    fn say(&mut self, line: String) {
        if let Some(s) = self.stdin.as_mut() {
            let _ = s.write_all(line.as_bytes());
        }
    }

    /// The group `pgid` started: the guard kills it if perflab dies before [`Guard::ended`].
    pub fn started(&mut self, pgid: u32) {
        self.say(format!("+{pgid}\n"));
    }

    /// The group `pgid` is done with (its leader not yet reaped, so the id is still its own).
    pub fn ended(&mut self, pgid: u32) {
        self.say(format!("-{pgid}\n"));
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // The end of the pipe: the guard kills what is still listed (nothing, normally) and exits.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}
