//! The command line: one subcommand per capability, each mapped onto its module's `cli` file.
//! This file only dispatches; every subcommand's arguments live beside the code they drive.
//! `packaging` makes the shell completions and man pages from these definitions.

use clap::{Parser, Subcommand};

pub mod packaging;

#[derive(Parser, Debug)]
#[command(name = "perflab", version, about = "A performance lab in one binary", propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Sample system and process metrics (vmstat + mpstat + iostat + sar + pidstat in one)
    Monitor(crate::monitor::cli::MonitorArgs),
    /// Generate HTTP load (closed or open model), truthfully
    Http(crate::workload::http::cli::HttpArgs),
    #[command(about = crate::workload::load_cli::about())]
    Load(crate::workload::load_cli::LoadArgs),
    /// Serve HTTP: the built-in target
    Serve(crate::serve::cli::ServeArgs),
    /// Measure latency with probes (icmp, tcp, http, udp, command), as ping does
    Probe(crate::probe::cli::ProbeArgs),
    /// Profile processes, a cgroup or the machine: perf record and a flame graph in one step
    Profile(crate::profile::cli::ProfileArgs),
    /// Run an experiment from a plan file
    Run(crate::runner::cli::RunArgs),
    /// Watch a run (live or finished) on the live page: its events, trials and metrics, from its store
    Watch(crate::live::watch::WatchArgs),
    /// Run the embedded demo plan and write its report
    Demo(crate::runner::cli::DemoArgs),
    /// Merge the run directories of a load's segments (`run --segment i/N`) into one run
    Merge(crate::dist::cli::MergeArgs),
    /// Write the report of one or more runs
    Report(crate::report::cli::ReportArgs),
    /// Compare two runs of the same plan
    Compare(crate::report::cli::CompareArgs),
    /// Export every table of a run's store as CSV
    Export(crate::store::cli::ExportArgs),
    /// Maintain a run's store (`perflab store upgrade RUN`: bring it to the current schema; `perflab
    /// store check RUN`: is it sound)
    Store(crate::store::cli::StoreArgs),
    /// Write the files that run a plan's load from N machines of a Slurm or Kubernetes cluster,
    /// one segment each, merged at the end
    Dist(crate::dist::engines::DistArgs),
    /// Check remote hosts (reachable, versions, facts, clock offset) or install perflab on them
    Hosts(crate::remote::cli::HostsArgs),
    /// The remote agent: speaks the agent protocol on stdin/stdout (started over ssh)
    Agent(crate::agent::cli::AgentArgs),
    /// Print a shell's completion script (bash, zsh, fish, elvish, powershell)
    Completions(packaging::CompletionsArgs),
    /// Write the man pages: perflab.1 and one per subcommand (perflab-run.1, ...)
    Man(packaging::ManArgs),
}

/// Parse arguments, run, and return the process exit code. Errors become one line on stderr.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
                || matches!(e.kind(), ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand)
            {
                let _ = e.print();
                return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    2
                } else {
                    0
                };
            }
            // The first line of the message, with what clap lists under it when it ends in a
            // colon (the missing arguments: `<PLAN>`).
            let text = e.render().to_string();
            let mut lines = text.lines().skip_while(|l| l.trim().is_empty());
            let mut line = lines
                .next()
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ")
                .to_string();
            if line.ends_with(':') {
                for more in lines.take_while(|l| l.starts_with(' ') && !l.trim().is_empty()) {
                    line.push(' ');
                    line.push_str(more.trim());
                }
            }
            eprintln!("perflab: error: {line} (see --help)");
            return 2;
        }
    };
    if matches!(
        cli.command,
        Command::Merge(_)
            | Command::Report(_)
            | Command::Compare(_)
            | Command::Export(_)
            | Command::Store(_)
            | Command::Completions(_)
            | Command::Man(_)
    ) {
        stop_on_a_closed_stdout();
    }
    quiet_on_a_closed_stdout();
    let result = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(cli.command))) {
        Ok(result) => result,
        // Unwound: what the command holds (a target, a child, a cgroup) was dropped and stopped.
        Err(payload) if closed_stdout(payload.as_ref()) => return CLOSED_STDOUT,
        Err(payload) => std::panic::resume_unwind(payload),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("perflab: error: {}", crate::error::one_line(&e));
            crate::error::exit_code(&e)
        }
    }
}

/// The exit status of a command whose stdout's reader went away: the shell's status of a tool
/// ended by SIGPIPE.
const CLOSED_STDOUT: i32 = 128 + libc::SIGPIPE;

/// Is this panic a failed print to a stdout whose reader went away (EPIPE)?
fn closed_stdout(payload: &(dyn std::any::Any + Send)) -> bool {
    let text = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied());
    text.is_some_and(|t| t.starts_with("failed printing to stdout") && t.contains("os error 32"))
}

/// The commands that keep SIGPIPE ignored (they talk to peers) end quietly with status 141 when
/// the reader of their output goes away (`perflab load cpu | head -3`): the failed print's panic
/// says nothing; on the main thread it unwinds to [`main`] (dropping, so stopping, what the command
/// started), on another the process exits at once.
fn quiet_on_a_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !closed_stdout(info.payload()) {
            default(info);
        } else if std::thread::current().name() != Some("main") {
            std::process::exit(CLOSED_STDOUT);
        }
    }));
}

/// Run the parsed command.
fn dispatch(command: Command) -> anyhow::Result<i32> {
    match command {
        Command::Monitor(a) if a.remote.host.is_some() && a.listen.is_some() => Err(crate::error::usage(
            "--listen serves this machine's samples: it does not go with --host",
        )),
        Command::Monitor(a) if a.remote.host.is_some() => crate::remote::monitor(a),
        Command::Monitor(a) => match a.listen.clone() {
            None => crate::monitor::cli::run(a),
            Some(addr) => crate::live::exporter::Exporter::start(&addr)
                .and_then(|exporter| crate::monitor::cli::run_with(a, &mut |s| exporter.latest.set(s.unix_s, &s.values))),
        },
        Command::Http(a) if a.live.is_some() => crate::runner::http_live::run(a),
        Command::Http(a) => crate::workload::http::cli::run(a),
        Command::Load(a) if a.live() => a.live_load().and_then(crate::runner::load_live::run),
        Command::Load(a) => crate::workload::load_cli::run(a),
        Command::Serve(a) => crate::serve::cli::run(a),
        Command::Probe(a) => crate::probe::cli::run(a),
        Command::Profile(a) => crate::profile::cli::run(a),
        Command::Run(a) => crate::runner::cli::run(a),
        Command::Watch(a) => crate::live::watch::run(a),
        Command::Demo(a) => crate::runner::cli::demo(a),
        Command::Merge(a) => crate::dist::cli::run(a),
        Command::Report(a) => crate::report::cli::report(a),
        Command::Compare(a) => crate::report::cli::compare(a),
        Command::Export(a) => crate::store::cli::run(a),
        Command::Store(a) => crate::store::cli::store(a),
        Command::Dist(a) => crate::dist::engines::run(a),
        Command::Hosts(a) => crate::remote::cli::run(a, crate::agent::facts),
        Command::Agent(a) => crate::agent::cli::run(a),
        Command::Completions(a) => packaging::completions(a),
        Command::Man(a) => packaging::man(a),
    }
}

/// The commands that only write files and text (`perflab report RUN | head`) end as any Unix tool
/// does when the reader of their output goes away: by SIGPIPE, silently, instead of a panic on the
/// failed print. The commands that talk to peers keep SIGPIPE ignored (a peer's reset is an error
/// they count, not the end of perflab).
fn stop_on_a_closed_stdout() {
    // SAFETY: called once at start-up, before any thread is spawned; SIG_DFL is a valid disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
