//! Plans: errors at their file:line:column with hints, matrix expansion, order, substitution.

use perflab::plan::{self, Order, Plan};

fn parse(src: &str) -> anyhow::Result<Plan> {
    plan::parse_str(src, "plan.toml")
}

fn err(src: &str) -> String {
    let e = parse(src)
        .and_then(|p| p.check_ports().map(|()| p))
        .expect_err("the plan is rejected");
    assert_eq!(perflab::error::exit_code(&e), 2, "bad input: {e:#}");
    let line = perflab::error::one_line(&e);
    assert!(!line.contains('\n'));
    line
}

const BASE: &str = "name = \"t\"\n[workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:9/\"\n";

#[test]
fn an_unknown_key_is_named_at_its_line_and_column_with_a_hint() {
    // Keys inside [workload] are checked by the workload registry (tests/run_plan.rs); a top-level one:
    let top = err("name = \"t\"\nrepetitons = 3\n[workload]\ntype = \"http\"\n");
    assert!(top.starts_with("plan.toml:2:1: unknown key `repetitons`"), "{top}");
    assert!(top.contains("did you mean `repetitions`"), "{top}");
}

#[test]
fn wrong_types_missing_references_and_bad_values_are_located() {
    let e = err("name = 5\n[workload]\ntype = \"http\"\n");
    assert!(e.starts_with("plan.toml:1:8:"), "{e}");
    let e = err(&format!("{BASE}connections = \"${{conc}}\"\n[matrix]\nconcurrency = [1, 2]\n"));
    assert!(
        e.starts_with("plan.toml:5:15:") && e.contains("`${conc}` is not a matrix parameter"),
        "{e}"
    );
    assert!(e.contains("did you mean `${concurrency}`"), "{e}");
    let e = err(&format!("{BASE}[matrix]\nconcurrency = []\n"));
    assert!(e.starts_with("plan.toml:6:1:") && e.contains("empty list"), "{e}");
    let e = err(&format!("{BASE}[phases]\nload = \"-5s\"\n"));
    assert!(e.starts_with("plan.toml:6:8:") && e.contains("negative"), "{e}");
    let e = err(&format!("order = \"random\"\n{BASE}"));
    assert!(e.starts_with("plan.toml:1:9:") && e.contains("unknown order"), "{e}");
    let e = err(&format!("{BASE}[target]\ncommand = \"true\"\nstop = {{ signal = \"SIGNOPE\" }}\n"));
    assert!(e.starts_with("plan.toml:7:1:") && e.contains("unknown signal"), "{e}");
    let e = err(&format!("{BASE}[target]\ncommand = \"true\"\nmemroy = \"1G\"\n"));
    assert!(e.starts_with("plan.toml:7:1:") && e.contains("did you mean `memory`"), "{e}");
    let e = err("name = \"t\"\n[workload\n");
    assert!(e.starts_with("plan.toml:2:"), "{e}");
}

#[test]
fn a_ready_port_already_in_use_is_refused_before_the_run() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let e = err(&format!(
        "{BASE}[target]\ncommand = \"true\"\nready = {{ tcp = \"127.0.0.1:{port}\" }}\n"
    ));
    assert!(
        e.starts_with("plan.toml:7:1:") && e.contains(&format!("port {port} is already in use")),
        "{e}"
    );
    drop(l);
    assert!(parse(&format!(
        "{BASE}[target]\ncommand = \"true\"\nready = {{ tcp = \"127.0.0.1:{port}\" }}\n"
    ))
    .is_ok());
}

#[test]
fn more_cpus_than_the_machine_has_is_an_error_or_a_skip() {
    let n = perflab::util::cpus::online_cpus().len();
    let src = format!(
        "{BASE}connections = 1\n[target]\ncommand = \"true\"\ncpus = \"${{cpus}}\"\n[matrix]\ncpus = [1, {}]\n",
        n + 1
    );
    let e = err(&src);
    assert!(e.contains("cannot be honoured") && e.contains("skip_unsupported"), "{e}");
    let p = parse(&format!("skip_unsupported = true\n{src}")).expect("skips");
    assert_eq!(p.points.len(), 1);
    assert_eq!(p.notes.len(), 1, "the skip is noted: {:?}", p.notes);
}

fn two_by_two(order: &str) -> Plan {
    parse(&format!(
        "name = \"m\"\nrepetitions = 2\n{order}\n[workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:9/${{model}}\"\nconnections = \"${{concurrency}}\"\n[matrix]\nconcurrency = [2, 4]\nmodel = [\"pool\", \"loop\"]\n"
    ))
    .expect("valid")
}

#[test]
fn a_2x2_matrix_with_2_repetitions_is_8_trials_with_typed_substitution() {
    let p = two_by_two("order = \"sequential\"");
    let t = plan::expand(&p);
    assert_eq!(t.len(), 8);
    assert_eq!(p.points.len(), 4);
    let w = &t[0].workload;
    assert_eq!(
        w.get("connections"),
        Some(&toml::Value::Integer(2)),
        "typed: an integer stays an integer"
    );
    assert_eq!(w.get("url").and_then(|v| v.as_str()), Some("http://127.0.0.1:9/pool"));
    assert_eq!(t[0].point_label, "concurrency=2 model=pool");
    // Sequential: both repetitions of a point, then the next point.
    let seq: Vec<(usize, u32)> = t.iter().map(|t| (t.point, t.repetition)).collect();
    assert_eq!(seq[..4], [(0, 1), (0, 2), (1, 1), (1, 2)]);
    let p = two_by_two("order = \"interleaved\"");
    let inter: Vec<(usize, u32)> = plan::expand(&p).iter().map(|t| (t.point, t.repetition)).collect();
    assert_eq!(inter[..5], [(0, 1), (1, 1), (2, 1), (3, 1), (0, 2)]);
    assert_eq!(p.order, Order::Interleaved);
}

#[test]
fn exclude_removes_points() {
    let p = parse(&format!(
        "{BASE}[matrix]\nc = [1, 2]\nm = [\"a\", \"b\"]\nexclude = [{{ c = 2, m = \"b\" }}]\n"
    ))
    .expect("valid");
    let labels: Vec<&str> = p.points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels, ["c=1 m=a", "c=1 m=b", "c=2 m=a"]);
}

#[test]
fn shuffled_order_depends_only_on_the_seed() {
    let order = |seed: u64| -> Vec<usize> {
        let src = format!("name = \"s\"\norder = \"shuffled\"\nseed = {seed}\nrepetitions = 3\n[workload]\ntype = \"exec\"\ncommand = [\"true\", \"${{x}}\"]\n[matrix]\nx = [1, 2, 3, 4, 5, 6]\n");
        plan::expand(&parse(&src).expect("valid")).iter().map(|t| t.point).collect()
    };
    assert_eq!(order(7), order(7));
    assert_ne!(order(7), order(8));
    // Each repetition round runs every point once.
    let o = order(7);
    for round in o.chunks(6) {
        let mut r = round.to_vec();
        r.sort_unstable();
        assert_eq!(r, [0, 1, 2, 3, 4, 5]);
    }
}

#[test]
fn the_dry_run_listing_follows_the_expansion_order() {
    let p = two_by_two("order = \"shuffled\"\nseed = 3");
    let t = plan::expand(&p);
    let listing = plan::dry_run_listing(&p, &t);
    let labels: Vec<&str> = listing
        .lines()
        .filter(|l| l.contains("concurrency="))
        .map(|l| &l[l.find("concurrency=").unwrap_or(0)..])
        .collect();
    let expected: Vec<&str> = t.iter().map(|t| t.point_label.as_str()).collect();
    assert_eq!(labels, expected);
    assert!(listing.contains("8 trial(s)"));
}

#[test]
fn thresholds_variants_and_adaptive_repetitions_parse() {
    let p = parse(&format!(
        "repetitions = {{ min = 3, max = 8, ci_pct = 2.5, metric = \"requests_per_s\" }}\nthresholds = [\"latency_p99_ms < 50\", {{ metric = \"error_rate_pct\", op = \"<=\", value = 1 }}]\n{BASE}[matrix]\nvariant = [\"before\", \"after\"]\n[variant.after]\nsetup = \"sysctl -w vm.swappiness=10\"\nteardown = [\"sysctl -w vm.swappiness=60\"]\n"
    ))
    .expect("valid");
    assert_eq!(
        p.repetitions,
        plan::Repetitions::Adaptive {
            min: 3,
            max: 8,
            ci_pct: 2.5,
            metric: Some("requests_per_s".into())
        }
    );
    assert_eq!(p.thresholds.len(), 2);
    assert_eq!(
        (p.thresholds[0].metric.as_str(), p.thresholds[0].op.as_str(), p.thresholds[0].value),
        ("latency_p99_ms", "<", 50.0)
    );
    assert_eq!(p.variants["after"].setup, ["sysctl -w vm.swappiness=10"]);
    assert_eq!(plan::expand(&p).len(), 6, "adaptive: min repetitions are listed");
    let e = err(&format!("{BASE}[variant.after]\nsetup = \"true\"\n"));
    assert!(e.starts_with("plan.toml:5:10:") && e.contains("no `variant` parameter"), "{e}");
}

#[test]
fn a_ready_url_port_already_in_use_is_refused_too() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let e = err(&format!(
        "{BASE}[target]\ncommand = \"true\"\nready = {{ http = \"http://localhost:{port}/health\" }}\n"
    ));
    assert!(
        e.starts_with("plan.toml:7:1:") && e.contains(&format!("port {port} is already in use")),
        "{e}"
    );
}

#[test]
fn an_exclude_entry_that_matches_nothing_is_an_error_and_text_matches_numbers() {
    let e = err(&format!("{BASE}[matrix]\nc = [1, 2]\nexclude = [{{ c = 3 }}]\n"));
    assert!(e.starts_with("plan.toml:7:1:") && e.contains("matches no matrix point"), "{e}");
    let p = parse(&format!("{BASE}[matrix]\nc = [1, 2]\nexclude = [{{ c = \"2\" }}]\n")).expect("valid");
    assert_eq!(p.points.len(), 1);
}

#[test]
fn variant_hooks_take_only_the_variant_name() {
    let p = parse(&format!(
        "{BASE}[matrix]\nvariant = [\"a\", \"b\"]\nc = [1]\n[variant.b]\nsetup = \"echo ${{variant}}\"\n"
    ))
    .expect("valid");
    assert_eq!(p.variants["b"].setup, ["echo b"]);
    let e = err(&format!(
        "{BASE}[matrix]\nvariant = [\"a\", \"b\"]\nc = [1]\n[variant.b]\nsetup = \"echo ${{c}}\"\n"
    ));
    assert!(e.starts_with("plan.toml:9:9:") && e.contains("only `${variant}`"), "{e}");
}

#[test]
fn unknown_keys_name_their_table_and_duplicates_and_unused_parameters_are_caught() {
    let e = err(&format!("{BASE}[phases]\nlod = \"5s\"\n"));
    assert!(
        e.starts_with("plan.toml:6:1: unknown key `lod` in [phases] (did you mean `load`?)"),
        "{e}"
    );
    let e = err(&format!("{BASE}[matrix]\nvariant = [\"x\"]\n[variant.x]\nsetpu = \"true\"\n"));
    assert!(
        e.starts_with("plan.toml:8:1: unknown key `setpu` in [variant.x] (did you mean `setup`?)"),
        "{e}"
    );
    let e = err(&format!(
        "{BASE}[target]\ncommand = \"true\"\nready = {{ tpc = \"127.0.0.1:9\" }}\n"
    ));
    assert!(e.starts_with("plan.toml:7:1:") && e.contains("did you mean `tcp`"), "{e}");
    let e = err(&format!("{BASE}[matrix]\nc = [1, 2, 1]\n"));
    assert!(e.starts_with("plan.toml:6:1:") && e.contains("lists 1 twice"), "{e}");
    let p = parse(&format!("{BASE}[matrix]\nc = [1, 2]\n")).expect("valid");
    assert_eq!(p.notes.len(), 1, "an unused parameter is noted");
    assert!(p.notes[0].contains("`c` is not used"), "{:?}", p.notes);
    let listing = plan::dry_run_listing(&p, &plan::expand(&p));
    assert!(listing.contains("note: matrix parameter `c`"), "{listing}");
}

#[test]
fn the_report_section_names_matrix_parameters_and_values() {
    let m = "[matrix]\nmodel = [\"pool\", \"threads\"]\nconcurrency = [1, 2]\n";
    let ok = format!("{BASE}{m}[report]\ncompare = \"model\"\nbaseline = \"pool\"\nx = \"concurrency\"\nx_scale = \"log\"\nmetrics = [\"requests_per_s\", \"p99\"]\n");
    parse(&ok).expect("a valid [report]");
    let e = err(&format!("{BASE}{m}[report]\ncompare = \"modle\"\n"));
    assert!(
        e.starts_with("plan.toml:9:11:") && e.contains("not a matrix parameter (the matrix has model, concurrency)"),
        "{e}"
    );
    let e = err(&format!("{BASE}{m}[report]\ncompare = \"model\"\nbaseline = \"fork\"\n"));
    assert!(
        e.starts_with("plan.toml:10:12:") && e.contains("not a value of `model` (pool, threads)"),
        "{e}"
    );
    let e = err(&format!("{BASE}{m}[report]\nx = \"concurrency\"\nx_scale = \"ln\"\n"));
    assert!(e.contains("use linear, log or category"), "{e}");
    let e = err(&format!("{BASE}{m}[report]\ncompare = \"model\"\nx = \"model\"\n"));
    assert!(e.contains("the same parameter"), "{e}");
    // An unknown key lists the known ones, with a hint.
    let e = err(&format!("{BASE}{m}[report]\ncompared = \"model\"\n"));
    assert!(e.starts_with("plan.toml:9:1:") && e.contains("did you mean `compare`"), "{e}");
}
