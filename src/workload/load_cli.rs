//! `perflab load <kind>`: run one built-in workload from the command line. Its subcommands are the
//! registry's kinds that have one ([`WorkloadKind::load`](crate::workload::registry::WorkloadKind::load)):
//! each kind's settings as options, with the common flags (`LoadFlags`) flattened in by the registry.
//!
//! Exit codes, as `perflab http`'s: 2 for bad input (one line on stderr, no load started); 130 when
//! interrupted by SIGINT or SIGTERM (the summary of what was measured is still printed); 1 when an
//! operation failed or none was measured; 0 otherwise.

use crate::workload::registry::{LoadCommand, KINDS};

/// `perflab load`'s arguments: the kind chosen and its parsed options.
pub struct LoadArgs {
    kind: &'static str,
    matches: clap::ArgMatches,
}

impl std::fmt::Debug for LoadArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadArgs").field("kind", &self.kind).finish_non_exhaustive()
    }
}

/// The kinds with a `perflab load` subcommand, with it, in the registry's order.
fn commands() -> Vec<(&'static str, LoadCommand)> {
    KINDS.iter().filter_map(|k| k.load().map(|c| (k.name(), c))).collect()
}

/// The built-in workloads `perflab load` runs, in the registry's order (`http` has `perflab http`;
/// `exec` runs other tools).
pub fn kinds() -> Vec<&'static str> {
    commands().into_iter().map(|(name, _)| name).collect()
}

/// `perflab load`'s line in `perflab --help` and at the top of `perflab load --help`.
pub fn about() -> String {
    format!("Load the machine with a built-in workload ({})", kinds().join(", "))
}

impl clap::Args for LoadArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let mut cmd = cmd.subcommand_required(true).arg_required_else_help(true);
        for (name, c) in commands() {
            // The settings' and flags' own doc comments are not the subcommand's line.
            let sub = (c.augment)(clap::Command::new(name)).about(c.about).long_about(None);
            // The JSON's schema is the kind's (docs/load.md).
            let sub = sub.mut_arg("json", |a| {
                a.help(format!("Print the result as JSON (schema perflab.load.{name}/1)"))
            });
            cmd = cmd.subcommand(sub);
        }
        cmd
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for LoadArgs {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let Some((name, sub)) = m.subcommand() else {
            return Err(clap::Error::new(clap::error::ErrorKind::MissingSubcommand));
        };
        let kind = kinds()
            .into_iter()
            .find(|k| *k == name)
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidSubcommand))?;
        Ok(LoadArgs {
            kind,
            matches: sub.clone(),
        })
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// `perflab load <kind> ... --live`: what the runner runs as a plan of one trial.
pub struct LiveLoad {
    /// The kind: the plan's name and its `[workload]` `type`.
    pub kind: &'static str,
    /// The settings given as the `[workload]` table (without `type`), checked.
    pub workload: toml::Table,
    /// The common flags: the phases (`-d`, `--warmup`), `--live`, `--runs-dir`, `--quiet`, `--json`.
    pub flags: crate::workload::driver::live::LoadFlags,
}

impl LoadArgs {
    /// Whether `--live` was given.
    pub fn live(&self) -> bool {
        matches!(self.matches.try_get_one::<String>("live"), Ok(Some(_)))
    }

    /// The options as a plan of one trial's parts (for `--live`); bad input is a usage error.
    pub fn live_load(&self) -> anyhow::Result<LiveLoad> {
        let (workload, flags) = (command(self.kind).plan)(&self.matches)?;
        Ok(LiveLoad {
            kind: self.kind,
            workload,
            flags,
        })
    }
}

/// The subcommand of a kind parsed from the subcommands.
fn command(kind: &str) -> LoadCommand {
    let (_, c) = commands()
        .into_iter()
        .find(|(name, _)| *name == kind)
        .expect("a kind parsed from the subcommands");
    c
}

pub fn run(a: LoadArgs) -> anyhow::Result<i32> {
    (command(a.kind).run)(&a.matches)
}

#[cfg(test)]
mod tests {
    use clap::{Args, FromArgMatches};

    struct Here;
    impl crate::workload::registry::spec::Locator for Here {
        fn at(&self, _: Option<&str>) -> String {
            "perflab load".into()
        }
    }

    /// `--live`: each kind's options, as parsed, become the `[workload]` table a plan builds the
    /// same workload from (a size as written, `--buffered` as `direct = false`, a positional).
    #[test]
    fn live_makes_the_options_a_workload_table_the_plan_builds() {
        let cmd = super::LoadArgs::augment_args(clap::Command::new("load"));
        let cases: [(&[&str], &str); 5] = [
            (&["cpu", "-w", "1", "-l", "50", "-m", "hash"], "load = 50.0"),
            (&["mem", "latency", "-s", "64M"], "size = \"64M\""),
            (&["disk", "--buffered", "--bs", "8K", "-s", "1M"], "direct = false"),
            (&["net", "127.0.0.1:5201", "-m", "rr", "-l", "1"], "size = 1"),
            (&["oltp", "--tables", "2", "-s", "point_select"], "tables = 2"),
        ];
        for (args, want) in cases {
            let m = cmd
                .clone()
                .try_get_matches_from(["load"].iter().chain(args).chain(&["--live"]))
                .unwrap_or_else(|e| panic!("{args:?}: {e}"));
            let a = super::LoadArgs::from_arg_matches(&m).expect("parsed");
            assert!(a.live(), "{args:?}");
            let l = a.live_load().unwrap_or_else(|e| panic!("{args:?}: {e:#}"));
            assert_eq!(l.kind, args[0]);
            let text = toml::to_string(&l.workload).expect("toml");
            assert!(text.contains(want), "{args:?}: {text}");
            crate::workload::registry::build(l.kind, &l.workload, &Here).unwrap_or_else(|e| panic!("{args:?}: {e:#}\n{text}"));
        }
    }

    /// Every kind of the registry but `http` and `exec` has a subcommand, so the help's list is
    /// the command's.
    #[test]
    fn the_subcommands_are_the_registrys_built_in_kinds() {
        let cmd = super::LoadArgs::augment_args(clap::Command::new("load"));
        let subcommands: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
        assert_eq!(subcommands, super::kinds());
        let built_in: Vec<&str> = crate::workload::registry::names()
            .into_iter()
            .filter(|n| !["http", "exec"].contains(n))
            .collect();
        assert_eq!(subcommands, built_in);
        assert_eq!(
            super::about(),
            "Load the machine with a built-in workload (cpu, mem, disk, net, oltp)"
        );
    }
}
