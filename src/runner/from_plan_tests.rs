//! `[workload] from` as the plan is built: its errors at the key, `--segment` refused, the run's mark.

use crate::model::Segment;

const HOSTS: &str = "[hosts]\nclient1 = { ssh = \"root@192.0.2.1\" }\nclient2 = { ssh = \"root@192.0.2.2\" }\n";

/// The plan with `workload` as its `[workload]` table, built into its experiment.
fn build(workload: &str) -> anyhow::Result<crate::runner::experiment::Experiment> {
    let src = format!("name = \"split\"\n{HOSTS}\n[workload]\n{workload}\n");
    let plan = crate::plan::parse_str(&src, "plan.toml")?;
    let trials = crate::plan::expand(&plan);
    crate::runner::from_plan::build(&plan, &trials, "plan.toml")
}

fn error(workload: &str) -> String {
    match build(workload) {
        Ok(_) => panic!("{workload} was accepted"),
        Err(e) => crate::error::one_line(&e),
    }
}

const HTTP: &str = "type = \"http\"\nurl = \"http://127.0.0.1:9/\"\nconnections = 3\n";

#[test]
fn from_names_distinct_hosts_of_the_plan_at_its_line() {
    let e = error(&format!("{HTTP}from = [\"local\", \"client3\"]"));
    assert!(
        e.starts_with("plan.toml:10:1: [workload] from: no host named `client3` in [hosts]"),
        "{e}"
    );
    let e = error(&format!("{HTTP}from = [\"client1\", \"local\", \"client1\"]"));
    assert!(e.starts_with("plan.toml:10:1: [workload] from: `client1` is named twice"), "{e}");
    let e = error(&format!("{HTTP}from = \"client1\""));
    assert!(e.contains("[workload] from: expected a list of host names"), "{e}");
    let e = error(&format!("{HTTP}from = []"));
    assert!(e.contains("the list is empty"), "{e}");
}

#[test]
fn from_refuses_exec_a_host_and_a_load_too_small_for_its_machines() {
    let e = error("type = \"exec\"\ncommand = [\"true\"]\nfrom = [\"local\", \"client1\"]");
    assert!(
        e.starts_with("plan.toml:9:1: [workload] from: an exec workload cannot be split"),
        "{e}"
    );
    let e = error(&format!("{HTTP}host = \"client1\"\nfrom = [\"local\", \"client1\"]"));
    assert!(e.contains("[workload] from: give `from`"), "{e}");
    // One connection cannot feed two machines.
    let e = error("type = \"http\"\nurl = \"http://127.0.0.1:9/\"\nconnections = 1\nfrom = [\"local\", \"client1\"]");
    assert!(e.starts_with("plan.toml:10:1: [workload] from: "), "{e}");
}

#[test]
fn from_with_segment_is_refused_at_the_key_and_the_run_is_marked_split() {
    let mut exp = build(&format!("{HTTP}from = [\"local\", \"client1\", \"client2\"]")).expect("a split plan");
    let mark = exp.split.clone().expect("the split's mark");
    let each: Vec<String> = mark.segments.iter().map(|s| format!("{} on {}", s.segment, s.hostname)).collect();
    assert_eq!(each, ["0/3 on local", "1/3 on client1", "2/3 on client2"]);
    let e = crate::runner::segment::apply(&mut exp, Segment { index: 0, count: 2 }).unwrap_err();
    assert_eq!(crate::error::exit_code(&e), 2, "a usage error");
    let e = crate::error::one_line(&e);
    assert!(e.contains("plan.toml:10:1: [workload] from already splits the load"), "{e}");
}

#[test]
fn an_oltp_load_from_several_machines_shares_one_database_server() {
    // Segment 0's machine prepares and drops the tables once: `always` and `cleanup` are allowed.
    let oltp = "type = \"oltp\"\ndb = \"mysql://sb@192.0.2.7/sbtest\"\nthreads = 2\nprepare = \"always\"\ncleanup = true\n";
    build(&format!("{oltp}from = [\"client1\", \"local\"]")).expect("an oltp load from two machines");
    // A SQLite file is each machine's own.
    let e = error("type = \"oltp\"\nthreads = 2\nfrom = [\"local\", \"client1\"]");
    assert!(
        e.contains("[workload] from: an oltp load split over machines needs one database server they all reach"),
        "{e}"
    );
}
