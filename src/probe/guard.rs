//! The command probe's guard: its commands die with perflab, even by SIGKILL, the whole group.
//!
//! `PR_SET_PDEATHSIG` takes only the process perflab started (`sh`), not what that started in turn
//! (`sh -c 'sleep 100'` forks the `sleep`). The guard is a small shell, in a process group of its
//! own, that outlives perflab: perflab writes `+PGID` on its stdin when a command starts and `-PGID`
//! once it has ended; when the pipe ends (perflab exited or died), the guard SIGKILLs every group
//! still listed. It costs one short write when a command starts and one when it ends.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};

/// The guard's script: a list of group ids kept in `g` (" 12 34 "), emptied as they end.
const SCRIPT: &str = r#"trap '' INT HUP TERM
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
