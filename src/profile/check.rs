//! Can perf profile here? What is missing, and how to enable it: said by the dry run, `perflab
//! hosts check`, `perflab profile` and, for a run that goes on without a profile, the report.

use super::Scope;
use crate::model::ProfileKind;
use std::process::{Command, Stdio};

/// Why a profile cannot be taken here, in the user's terms, and what would enable it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Missing {
    pub what: String,
    pub how: String,
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.what, self.how)
    }
}

/// Whether `kind` profiles of `scope` can be taken on this machine, as this user.
pub fn availability(kind: ProfileKind, scope: &Scope) -> Result<(), Missing> {
    perf_runs()?;
    let root = is_root();
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok());
    judge(kind, scope, root, paranoid, tracefs_state())
}

/// Where the tracepoints are: mounted, mountable (by root), or neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tracefs {
    Mounted,
    NotMounted,
}

/// The rules, apart from the machine (tested on their own).
pub fn judge(kind: ProfileKind, scope: &Scope, root: bool, paranoid: Option<i64>, tracefs: Tracefs) -> Result<(), Missing> {
    const SYSCTL: &str = "sysctl -w kernel.perf_event_paranoid";
    if !root {
        let p = paranoid.unwrap_or(2);
        if p >= 3 {
            return Err(Missing {
                what: format!("perf_event_paranoid is {p}: this kernel forbids perf to users other than root"),
                how: format!("run as root, or `{SYSCTL}=1`"),
            });
        }
        if !matches!(scope, Scope::Processes(_)) && p > 0 {
            return Err(Missing {
                what: format!(
                    "perf_event_paranoid is {p}: profiling {} needs root or a setting of 0 or less",
                    scope.describe()
                ),
                how: format!("run as root, or `{SYSCTL}=0`"),
            });
        }
        if kind == ProfileKind::OffCpu && p > -1 {
            return Err(Missing {
                what: format!("perf_event_paranoid is {p}: the sched:sched_switch tracepoint needs root or a setting of -1"),
                how: format!("run as root, or `{SYSCTL}=-1`"),
            });
        }
        if kind == ProfileKind::OffCpu && tracefs == Tracefs::NotMounted {
            return Err(Missing {
                what: "tracefs is not mounted (the sched:sched_switch tracepoint needs it)".into(),
                how: "mount -t tracefs nodev /sys/kernel/tracing, or run as root: perflab mounts it for the profile".into(),
            });
        }
    }
    Ok(())
}

/// Is `perf` on PATH and does it run (Debian's `perf` is a wrapper that fails when no build of
/// perf matches the running kernel)?
fn perf_runs() -> Result<(), Missing> {
    let how = "install it: apt-get install linux-perf (Debian), linux-tools-$(uname -r) (Ubuntu), perf (Fedora)";
    match Command::new("perf")
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(s) if s.success() => Ok(()),
        Ok(_) => Err(Missing {
            what: "perf does not run for this kernel".into(),
            how: how.into(),
        }),
        Err(_) => Err(Missing {
            what: "perf is not installed".into(),
            how: how.into(),
        }),
    }
}

pub(super) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The tracing file system's directory of the sched:sched_switch tracepoint, if mounted.
pub(super) fn tracefs_state() -> Tracefs {
    let mounted = [
        "/sys/kernel/tracing/events/sched/sched_switch",
        "/sys/kernel/debug/tracing/events/sched/sched_switch",
    ]
    .iter()
    .any(|p| std::path::Path::new(p).exists());
    if mounted {
        Tracefs::Mounted
    } else {
        Tracefs::NotMounted
    }
}

/// The note a profile gets when most of its samples have no symbol.
pub fn symbols_note(unknown_share: f64) -> Option<String> {
    (unknown_share >= 0.5).then(|| {
        format!(
            "{:.0} % of the samples are in frames without a symbol: the target's binaries or libraries lack symbols (build with -g and keep the symbol table, or install the -dbgsym packages)",
            100.0 * unknown_share
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_an_unprivileged_user_may_profile() {
        let own = Scope::Processes(vec![1]);
        let on = ProfileKind::OnCpu;
        assert_eq!(judge(on, &own, false, Some(2), Tracefs::Mounted), Ok(()));
        assert!(judge(on, &Scope::System, false, Some(2), Tracefs::Mounted)
            .unwrap_err()
            .how
            .contains("kernel.perf_event_paranoid=0"));
        assert!(judge(on, &own, false, Some(3), Tracefs::Mounted).unwrap_err().what.contains("is 3"));
        assert!(judge(ProfileKind::OffCpu, &own, false, Some(2), Tracefs::Mounted)
            .unwrap_err()
            .what
            .contains("sched_switch"));
        assert!(judge(ProfileKind::OffCpu, &own, false, Some(-1), Tracefs::NotMounted)
            .unwrap_err()
            .what
            .contains("tracefs"));
        // Root may do everything (tracefs is mounted for the profile).
        assert_eq!(
            judge(ProfileKind::OffCpu, &Scope::System, true, Some(3), Tracefs::NotMounted),
            Ok(())
        );
    }

    #[test]
    fn a_profile_without_symbols_says_so() {
        assert!(symbols_note(0.2).is_none());
        assert!(symbols_note(0.8).expect("note").starts_with("80 %"));
    }
}

/// Whether the program a target runs has a symbol table: a stripped binary (no `.symtab` and no
/// debug information) names only its exported functions in a profile. None when it has one, or
/// when it cannot be found or read (a script, a name not on PATH).
pub fn symbols_of_program(program: &str) -> Option<String> {
    let path = if program.contains('/') {
        std::path::PathBuf::from(program)
    } else {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|d| d.join(program))
            .find(|p| p.is_file())?
    };
    let bytes = std::fs::read(&path).ok()?;
    let names = elf_section_names(&bytes)?;
    let has = |n: &str| names.iter().any(|s| s == n);
    (!has(".symtab") && !has(".debug_info") && !has(".gnu_debuglink")).then(|| {
        format!(
            "{} is stripped (no symbol table): its own functions show as [unknown] in the profile unless its debug symbols are installed (the -dbgsym package) or it is built with them",
            path.display()
        )
    })
}

/// The section names of a 64-bit little-endian ELF file.
fn elf_section_names(b: &[u8]) -> Option<Vec<String>> {
    if b.get(0..4)? != b"\x7fELF" || *b.get(4)? != 2 || *b.get(5)? != 1 {
        return None;
    }
    let u16_at = |o: usize| Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?) as usize);
    let u32_at = |o: usize| Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?) as usize);
    let u64_at = |o: usize| Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?) as usize);
    let (shoff, shentsize, shnum, shstrndx) = (u64_at(0x28)?, u16_at(0x3a)?, u16_at(0x3c)?, u16_at(0x3e)?);
    let section = |i: usize| -> Option<(usize, usize, usize)> {
        let o = shoff.checked_add(i.checked_mul(shentsize)?)?;
        Some((u32_at(o)?, u64_at(o + 0x18)?, u64_at(o + 0x20)?))
    };
    let (_, str_off, str_size) = section(shstrndx)?;
    let strtab = b.get(str_off..str_off.checked_add(str_size)?)?;
    let mut names = Vec::new();
    for i in 0..shnum {
        let (name, _, _) = section(i)?;
        let rest = strtab.get(name..)?;
        let end = rest.iter().position(|&c| c == 0)?;
        names.push(String::from_utf8_lossy(&rest[..end]).into_owned());
    }
    Some(names)
}

#[cfg(test)]
mod elf_tests {
    #[test]
    fn stripped_and_unstripped_programs() {
        // perflab's own test binary has its symbols.
        let me = std::env::current_exe().expect("exe");
        assert_eq!(super::symbols_of_program(&me.display().to_string()), None);
        let names = super::elf_section_names(&std::fs::read(&me).expect("read")).expect("elf");
        assert!(names.iter().any(|n| n == ".text"));
        assert!(super::elf_section_names(b"#!/bin/sh\n").is_none());
        assert_eq!(super::symbols_of_program("/nonexistent/x"), None);
    }
}
