//! The dry run's notes on exec tools: no example's tool runs past its load phase, and a plan whose
//! tool does is warned about in one line, with the estimate counting the tool's own duration. The
//! notes show the values the trials will use, `${name}` substituted. A variant setting
//! vm.swappiness on a machine without swap is said to have no effect, at the dry run and in the report.

use perflab::plan;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

#[test]
fn no_example_runs_past_its_load_phase() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let label = format!("examples/{}", p.file_name().unwrap().to_string_lossy());
        let plan = plan::parse_str(&std::fs::read_to_string(&p).unwrap(), &label).unwrap_or_else(|e| panic!("{e:#}"));
        let listing = plan::dry_run_listing(&plan, &plan::expand(&plan));
        assert!(!listing.contains("${"), "a value left unsubstituted, {label}:\n{listing}");
        assert!(!listing.contains("runs past"), "{label}:\n{listing}");
        assert!(!listing.contains("warning:"), "{label}:\n{listing}");
        if plan.workload.kind == "exec" {
            // Every exec example's tool duration is known and equals its load phase.
            assert!(!listing.contains("cannot be read from its command"), "{label}:\n{listing}");
            assert!(
                !listing.contains("ends before") && !listing.contains("stops within"),
                "{label}:\n{listing}"
            );
            seen += 1;
        }
    }
    assert!(seen >= 5, "the exec examples were checked: {seen}");
}

fn dry_run(plan: &str) -> (i32, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("past.toml");
    std::fs::write(&path, plan).unwrap();
    let out = Command::new(BIN).args(["run", "--dry-run"]).arg(&path).output().expect("perflab");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const PHASES: &str = "[phases]\nbaseline = \"1s\"\nwarmup = \"0s\"\nload = \"10s\"\nrecovery = \"1s\"\n";

#[test]
fn a_tool_running_past_the_load_phase_is_one_warning_and_the_estimate_counts_it() {
    let plan = format!("name = \"past\"\nrepetitions = 2\n[workload]\ntype = \"exec\"\ncommand = [\"sleep\", \"30\"]\n{PHASES}");
    let (code, out, err) = dry_run(&plan);
    assert_eq!(code, 0, "{out}{err}");
    let warnings: Vec<&str> = out.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(
        warnings,
        ["warning: sleep 30 runs past [phases] load = 10s: each trial's load phase lasts 30s, not 10s, and the estimate counts 30s"],
        "{out}"
    );
    assert!(!out.contains("note:"), "no generic note beside it: {out}");
    // 2 trials × (1s baseline + 30s of sleep + 1s recovery).
    assert!(out.contains("2 trial(s), about 1m4s of measurement"), "{out}");
}

#[test]
fn a_matrix_parameter_sets_the_duration_and_the_longest_point_is_named() {
    let plan = format!("name = \"past\"\n[workload]\ntype = \"exec\"\ncommand = \"sleep ${{secs}}\"\n[matrix]\nsecs = [10, 20]\n{PHASES}");
    let (code, out, err) = dry_run(&plan);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("warning: sleep 20 (at secs=20) runs past [phases] load = 10s: each trial's load phase lasts 20s, not 10s, and the estimate counts 20s"),
        "{out}"
    );
    // (1 + 10 + 1) + (1 + 20 + 1).
    assert!(out.contains("2 trial(s), about 34s of measurement"), "{out}");
}

#[test]
fn a_tool_ending_early_or_of_unknown_length_is_a_note() {
    let plan = format!("name = \"early\"\n[workload]\ntype = \"exec\"\ncommand = [\"sleep\", \"4\"]\n{PHASES}");
    let (code, out, _) = dry_run(&plan);
    assert_eq!(code, 0);
    assert!(
        out.contains("note: sleep 4 ends before [phases] load = 10s: the load phase ends when it exits (after 4s) and the recovery starts then; the estimate counts 4s"),
        "{out}"
    );
    assert!(out.contains("1 trial(s), about 6s of measurement"), "{out}");
    let plan = format!("name = \"unknown\"\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n{PHASES}");
    let (code, out, _) = dry_run(&plan);
    assert_eq!(code, 0);
    let notes: Vec<&str> = out.lines().filter(|l| l.starts_with("note:")).collect();
    assert_eq!(notes.len(), 1, "one short generic note: {out}");
    assert!(notes[0].contains("how long it runs cannot be read from its command"), "{out}");
    assert!(out.contains("1 trial(s), about 12s of measurement"), "{out}");
}

#[test]
fn the_requests_note_shows_each_points_value_not_the_placeholder() {
    let http = "[workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:1/\"\nrequests = \"${requests}\"\n";
    let plan = format!("name = \"reqs\"\n{http}[matrix]\nrequests = [10, 100, 1000]\n{PHASES}");
    let (code, out, err) = dry_run(&plan);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("${"), "{out}");
    assert!(
        out.contains("note: [workload] requests = 10, 100 or 1000 (by point): a trial stops after that many responses or at the end of its load phase (10s)"),
        "{out}"
    );
    let plan = format!("name = \"reqs\"\n{http}[matrix]\nrequests = [500]\n{PHASES}");
    let (code, out, err) = dry_run(&plan);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("note: [workload] requests = 500: a trial stops after that many responses"),
        "{out}"
    );
}

/// This machine's SwapTotal in kB.
fn swap_kb() -> u64 {
    let m = std::fs::read_to_string("/proc/meminfo").expect("/proc/meminfo");
    let line = m.lines().find(|l| l.starts_with("SwapTotal:")).expect("SwapTotal");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("a number")
}

const NO_EFFECT: &str = "vm.swappiness, but this machine has no swap (SwapTotal 0 kB in /proc/meminfo): nothing can be swapped out, so the setting cannot have an effect here";

#[test]
fn swappiness_without_swap_is_said_to_have_no_effect() {
    let no_swap = swap_kb() == 0;
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/001_swappiness.toml");
    let (code, out, err) = dry_run(&std::fs::read_to_string(example).unwrap());
    assert_eq!(code, 0, "{out}{err}");
    let note = format!("note: variants after, before set {NO_EFFECT}");
    assert_eq!(out.contains(&note), no_swap, "said exactly when this machine has no swap:\n{out}");

    // A run keeps the note for its report. The variant writes the value swappiness already has (no
    // change to the machine); where it cannot, its trial fails, and the note is there all the same.
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("swap.toml");
    std::fs::write(
        &plan,
        "name = \"swap\"\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n[matrix]\nvariant = [\"same\"]\n\
         [variant.same]\nsetup = \"sysctl -q -w vm.swappiness=$(cat /proc/sys/vm/swappiness)\"\n\
         [phases]\nbaseline = \"0s\"\nwarmup = \"0s\"\nload = \"50ms\"\nrecovery = \"0s\"\ninterval = \"100ms\"\n",
    )
    .unwrap();
    let runs = tmp.path().join("runs");
    let run = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("perflab run");
    assert!(matches!(run.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&run.stderr));
    let dir = crate::common::only_run_dir(&runs);
    let md = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    let note = format!("variant same sets {NO_EFFECT}");
    assert_eq!(md.contains(&note), no_swap, "{md}");
}
