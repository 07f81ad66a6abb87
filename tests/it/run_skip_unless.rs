//! `[variant.X] skip_unless`: preconditions checked once when the run starts. A variant whose check
//! fails is not run (its setup never runs), with a note carrying the check's own stderr line; when
//! nothing is left, nothing is stored and the outcome is `skipped` with exit code 0.

use perflab::runner::execute::{execute, RunOptions};
use perflab::store::RunStatus;
use perflab::util::Cancel;

fn plan_text(marker: &std::path::Path, a_check: &str, b_check: &str) -> String {
    format!(
        r#"name = "skip"
[workload]
type = "exec"
command = ["true"]
adapter = "none"

[matrix]
variant = ["a", "b"]

[variant.a]
skip_unless = "{a_check}"
setup = "touch {m}"

[variant.b]
skip_unless = ["true", "{b_check}"]

[phases]
baseline = "0s"
warmup = "0s"
load = "100ms"
recovery = "0s"
interval = "50ms"
"#,
        m = marker.display()
    )
}

fn run(text: &str, runs: &std::path::Path) -> perflab::runner::execute::RunOutcome {
    let plan = perflab::plan::parse_str(text, "skip.toml").expect("plan");
    let listing = perflab::plan::dry_run_listing(&plan, &perflab::plan::expand(&plan));
    assert!(listing.contains("note: variant a runs only if"), "{listing}");
    let trials = perflab::plan::expand(&plan);
    let exp = perflab::runner::from_plan::build(&plan, &trials, "skip.toml").expect("build");
    let opts = RunOptions {
        runs_dir: runs.to_path_buf(),
        resume: None,
        retry_failed: false,
        quiet: true,
        fail_fast: false,
        live: None,
        tui: false,
    };
    execute(exp, &opts, &Cancel::new()).expect("execute")
}

#[test]
fn a_variant_whose_check_fails_is_skipped_with_its_reason_and_the_others_run() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("setup-ran");
    let text = plan_text(&marker, "echo needs the moon >&2; exit 3", "true");
    let out = run(&text, &tmp.path().join("runs"));
    assert_eq!(out.status, RunStatus::Complete);
    assert_eq!(out.exit_code(), 0);
    assert_eq!(
        out.notes,
        vec!["variant a skipped (1 point(s) not run): needs the moon".to_string()]
    );
    assert!(!marker.exists(), "the skipped variant's setup never ran");
    let trials = perflab::store::Store::open(&out.dir).unwrap().trials().unwrap();
    assert_eq!(trials.len(), 1);
    assert!(trials[0].params_json.contains("\"b\""), "{}", trials[0].params_json);
}

#[test]
fn when_every_variant_is_skipped_nothing_is_stored() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("setup-ran");
    let runs = tmp.path().join("runs");
    let out = run(&plan_text(&marker, "false", "exit 1"), &runs);
    assert_eq!(out.status, RunStatus::Skipped);
    assert_eq!(out.exit_code(), 0);
    assert_eq!(out.notes.len(), 2);
    assert!(
        out.notes.iter().any(|n| n.ends_with("`false` failed (exit status: 1)")),
        "{:?}",
        out.notes
    );
    assert!(!runs.exists(), "no run directory");
    assert!(!marker.exists());
}
