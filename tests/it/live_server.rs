//! The live server: `perflab run --live` on a short plan, read with a plain TCP client while it
//! runs: `/events` (server-sent events, resumed with Last-Event-ID) and `/metrics` (OpenMetrics)
//! carry the figures the store keeps for its trials; then `perflab watch` serves the finished run
//! and headless Chromium shows the whole of it, with nothing fetched from elsewhere.

use perflab::store::Store;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{free_port, only_run_dir, write_plan};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

/// The live feed's http plan, its 2 repetitions adaptive (one round, then stopped at `max`: one `ci`
/// event for the page's CI panel).
fn plan(port: u16) -> String {
    let plan = crate::live_feed::http_plan("live-server", port, 300, ["200ms", "200ms", "500ms"]);
    assert!(plan.contains("\nrepetitions = 2\n"));
    plan.replace("\nrepetitions = 2\n", "\nrepetitions = { min = 2, max = 2, ci_pct = 50.0 }\n")
}

/// Kills the child it holds (a process this test started) on every exit path.
struct Kill(Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Connect to the live server, waiting (bounded) for it to listen.
fn connect(port: u16) -> TcpStream {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match TcpStream::connect(("127.0.0.1", port)) {
            Ok(s) => {
                s.set_read_timeout(Some(Duration::from_secs(60))).expect("timeout");
                return s;
            }
            Err(e) if Instant::now() > deadline => panic!("the live server never listened: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// GET `path` (with `extra` headers); the response's head, and a reader at its body.
fn get(port: u16, path: &str, extra: &str) -> (String, BufReader<TcpStream>) {
    let mut s = connect(port);
    write!(s, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}\r\n").expect("request");
    let mut r = BufReader::new(s);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        r.read_line(&mut line).expect("head");
        if line == "\r\n" || line.is_empty() {
            return (head, r);
        }
        head.push_str(&line);
    }
}

/// The next server-sent event: (id, kind, data).
fn next_event(r: &mut BufReader<TcpStream>) -> (i64, String, serde_json::Value) {
    let (mut id, mut kind) = (0, String::new());
    loop {
        let mut line = String::new();
        assert!(r.read_line(&mut line).expect("event") > 0, "the stream ended");
        let line = line.trim_end();
        // (The body is chunked: its chunk sizes are lines of their own, skipped as noise here.)
        if let Some(v) = line.strip_prefix("id: ") {
            id = v.parse().expect("id");
        } else if let Some(v) = line.strip_prefix("event: ") {
            kind = v.to_string();
        } else if let Some(v) = line.strip_prefix("data: ") {
            return (id, kind, serde_json::from_str(v).expect("data is JSON"));
        }
    }
}

/// `/metrics` while the run runs: the whole body (chunked or not), ending with `# EOF`.
fn metrics(port: u16) -> String {
    let (head, mut r) = get(port, "/metrics", "Connection: close\r\n");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("application/openmetrics-text"), "{head}");
    let mut body = String::new();
    r.read_to_string(&mut body).expect("body");
    assert!(body.trim_end().ends_with("# EOF"), "{body}");
    body
}

fn metric_value(text: &str, prefix: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("{prefix} in {text}"));
    line.rsplit(' ').next().and_then(|v| v.parse().ok()).expect("a value")
}

/// After the run's end: stdout up to the line `report: …/report.html` (the summary and `stored in`
/// come first), then `/report`, which the live page serves until perflab exits (the server stops
/// 0.75 s after the paths are printed): the report's HTML, the same bytes as the file. What was
/// printed, all of it once perflab has exited.
fn report_served(port: u16, out: &mut BufReader<std::process::ChildStdout>) -> String {
    let mut printed = String::new();
    let html = loop {
        let mut line = String::new();
        assert!(out.read_line(&mut line).expect("stdout") > 0, "no report.html line: {printed}");
        printed.push_str(&line);
        let file = line.trim_end().strip_prefix("report: ").filter(|f| f.ends_with("report.html"));
        if let Some(f) = file {
            break std::path::PathBuf::from(f);
        }
    };
    let (head, mut body) = get(port, "/report", "Connection: close\r\n");
    assert!(head.starts_with("HTTP/1.1 200") && head.contains("text/html"), "{head}");
    let mut served = Vec::new();
    body.read_to_end(&mut served).expect("the report");
    assert_eq!(served, std::fs::read(&html).expect("report.html"), "/report is {}", html.display());
    out.read_to_string(&mut printed).expect("stdout");
    printed
}

/// The run's report, written into its directory as `perflab run` writes it, each file's path printed
/// after the summary and `stored in DIR`.
fn report_written(dir: &std::path::Path, out: &str) {
    let stored = out.find("stored in").unwrap_or_else(|| panic!("{out}"));
    for ext in ["md", "html", "json", "csv"] {
        let file = dir.join(format!("report.{ext}"));
        assert!(file.is_file(), "{} written: {out}", file.display());
        let line = format!("report: {}", file.display());
        assert!(out.find(&line).is_some_and(|at| at > stored), "`{line}` after `stored in`: {out}");
    }
}

#[test]
fn a_live_run_serves_its_events_and_metrics_and_a_watched_finished_run_shows_whole() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(tmp.path(), &plan(free_port()));
    let runs = tmp.path().join("runs");
    let live = free_port();
    let child = Command::new(BIN)
        .args(["run", "--quiet", &format!("--live=127.0.0.1:{live}"), "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run perflab");
    let mut run = Kill(child);
    // Meanwhile, `perflab monitor --listen` (its 3 s overlap the run's).
    let monitor = std::thread::spawn(monitor_listens);

    // Every event from the first, as they come; /metrics and a resumed stream once trial 0 is stored.
    let (head, mut events) = get(live, "/events", "");
    assert!(head.starts_with("HTTP/1.1 200") && head.contains("text/event-stream"), "{head}");
    let mut seen = Vec::new();
    let mut during = None;
    loop {
        let (id, kind, data) = next_event(&mut events);
        seen.push((id, kind.clone(), data.clone()));
        if kind == "trial_end" && during.is_none() {
            let m = metrics(live);
            let (rhead, mut resumed) = get(live, "/events", &format!("Last-Event-ID: {}\r\n", id - 1));
            assert!(rhead.starts_with("HTTP/1.1 200"), "{rhead}");
            let (rid, rkind, _) = next_event(&mut resumed);
            assert_eq!((rid, rkind.as_str()), (id, "trial_end"), "Last-Event-ID resumes after it");
            during = Some(m);
        }
        if kind == "run_end" {
            break;
        }
    }
    let status = run.0.wait().expect("wait");
    let mut err = String::new();
    run.0.stderr.take().expect("stderr").read_to_string(&mut err).expect("stderr");
    assert_eq!(status.code(), Some(0), "stderr: {err}");
    assert!(
        err.contains(&format!("live: http://127.0.0.1:{live}/")),
        "the address is printed: {err}"
    );

    let dir = only_run_dir(&runs);
    let trials = Store::open(&dir).expect("open").trials().expect("trials");
    assert_eq!(trials.len(), 2);
    assert!(
        seen.windows(2).all(|w| w[0].0 + 1 == w[1].0),
        "every event, in order, from the first"
    );
    assert_eq!(seen[0].1, "run_start");
    for t in &trials {
        let requests = t.metric("requests").expect("requests");
        let sum: f64 = seen
            .iter()
            .filter(|(_, k, d)| k == "second" && d["trial"] == t.id)
            .map(|(_, _, d)| d["responses"].as_f64().expect("responses"))
            .sum();
        assert_eq!(sum, requests, "trial {}: the streamed seconds sum to its stored requests", t.id);
        let end = seen
            .iter()
            .find(|(_, k, d)| k == "trial_end" && d["trial"] == t.id)
            .expect("its end");
        let rps = end.2["figures"]
            .as_array()
            .expect("figures")
            .iter()
            .find(|f| f["name"] == "requests_per_s")
            .expect("rps");
        let (streamed, stored) = (rps["value"].as_f64().expect("value"), t.metric("requests_per_s").expect("stored"));
        // (serde_json reads a number back to within an ulp or so of the one written.)
        assert!(
            (streamed - stored).abs() <= 1e-12 * stored.abs(),
            "trial {}: {streamed} vs {stored}",
            t.id
        );
    }
    // /metrics while trial 1 ran: trial 0's stored figures, and the run's counts.
    let m = during.expect("metrics read during the run");
    let first = &trials[0];
    let labels = format!(
        "perflab_live_trial_figure{{run=\"live-server\",trial=\"{}\",name=\"requests\",",
        first.id
    );
    assert_eq!(Some(metric_value(&m, &labels)), first.metric("requests"), "{m}");
    assert_eq!(
        metric_value(&m, "perflab_live_trials{run=\"live-server\",state=\"ok\"}"),
        1.0,
        "{m}"
    );
    assert!(
        m.contains("perflab_live_responses_per_second{") || m.contains("perflab_live_sample{"),
        "{m}"
    );
    metrics_parse_as_openmetrics(&m, &seen, first);

    watched_in_chromium(&dir, tmp.path(), &seen);
    // The report it wrote draws the same per-second charts, from the stored series.
    crate::report_browser::per_second_panels_drawn(&dir, tmp.path());
    monitor.join().expect("monitor --listen");
}

/// `perflab monitor --listen 127.0.0.1:0 --duration 3s`: its `/metrics`, through the strict
/// parser, carries the figures of the sample it names by time, exactly as `--jsonl` writes them.
fn monitor_listens() {
    let tmp = tempfile::tempdir().expect("tmp");
    let jsonl = tmp.path().join("m.jsonl");
    let (mut m, port, _err) = serving(
        Command::new(BIN)
            .args([
                "monitor",
                "--quiet",
                "--listen",
                "127.0.0.1:0",
                "--duration",
                "3s",
                "--interval",
                "500ms",
                "--jsonl",
            ])
            .arg(&jsonl)
            .stdout(Stdio::null()),
        "perflab: monitor: serving http://127.0.0.1:",
        "/metrics",
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let body = loop {
        let (head, mut r) = get(port, "/metrics", "Connection: close\r\n");
        let mut body = String::new();
        r.read_to_string(&mut body).expect("body");
        if head.starts_with("HTTP/1.1 200") {
            assert!(head.contains("application/openmetrics-text"), "{head}");
            break body;
        }
        assert!(head.starts_with("HTTP/1.1 503") && Instant::now() < deadline, "{head}{body}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let (post, _) = {
        let mut s = connect(port);
        write!(s, "POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n").expect("request");
        let mut r = BufReader::new(s);
        let mut head = String::new();
        r.read_line(&mut head).expect("head");
        (head, r)
    };
    assert!(post.starts_with("HTTP/1.1 405"), "GET only: {post}");
    let status = m.0.wait().expect("wait");
    assert_eq!(status.code(), Some(0));
    let Some(samples) = crate::live_openmetrics::parse(&body) else {
        return;
    };
    let at = crate::live_openmetrics::find(&samples, "perflab_monitor_sample_time_seconds", &[])
        .expect("time")
        .value;
    let text = std::fs::read_to_string(&jsonl).expect("jsonl");
    let rec: serde_json::Value = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json"))
        .find(|r| r["unix_s"].as_f64() == Some(at))
        .unwrap_or_else(|| panic!("the sample of {at} is written: {text}"));
    let figures = rec.as_object().expect("object");
    let served: Vec<_> = samples.iter().filter(|s| s.name == "perflab_monitor_sample").collect();
    assert!(served.len() > 10, "{body}");
    for s in served {
        let name = s.label("name").expect("name");
        assert_eq!(figures.get(name).and_then(serde_json::Value::as_f64), Some(s.value), "{name}");
    }
    assert!(
        figures.contains_key("cpu_busy_pct") && served_has(&samples, "mem_used_mb"),
        "{body}"
    );
}

fn served_has(samples: &[crate::live_openmetrics::Sample], name: &str) -> bool {
    crate::live_openmetrics::find(samples, "perflab_monitor_sample", &[("name", name)]).is_some()
}

/// `/metrics` read during the run, through a strict OpenMetrics parser: its values are those of
/// the events streamed (the trial's stored figures, the run's counts, a second's rates).
fn metrics_parse_as_openmetrics(m: &str, seen: &[(i64, String, serde_json::Value)], first: &perflab::store::StoredTrial) {
    use crate::live_openmetrics::{find, parse};
    let Some(samples) = parse(m) else { return };
    let id = first.id.to_string();
    let requests = find(&samples, "perflab_live_trial_figure", &[("trial", &id), ("name", "requests")]).expect("requests");
    assert_eq!(Some(requests.value), first.metric("requests"));
    let rps = find(&samples, "perflab_live_trial_figure", &[("trial", &id), ("name", "requests_per_s")]).expect("rps");
    let stored = first.metric("requests_per_s").expect("stored rps");
    assert!((rps.value - stored).abs() <= 1e-12 * stored, "{} vs {stored}", rps.value);
    let count = |state: &str| find(&samples, "perflab_live_trials", &[("run", "live-server"), ("state", state)]).map(|s| s.value);
    assert_eq!((count("planned"), count("ok"), count("failed")), (Some(2.0), Some(1.0), Some(0.0)));
    let running = find(&samples, "perflab_live_running", &[("status", "running")]).expect("running");
    assert_eq!(running.value, 1.0);
    // A second's rates are those of a `second` event of the trial it names.
    if let Some(s) = find(&samples, "perflab_live_responses_per_second", &[]) {
        let trial: i64 = s.label("trial").expect("trial label").parse().expect("trial id");
        assert!(
            seen.iter().any(|(_, k, d)| k == "second"
                && d["trial"] == trial
                && d["responses"].as_f64().expect("responses") / d["span_s"].as_f64().unwrap_or(1.0) == s.value),
            "{s:?} is no second of trial {trial}"
        );
    }
}

/// `perflab watch` serves the finished run; headless Chromium renders all of it, the load chart
/// with the last trial and, faint behind it, the point's earlier repetition (from its own
/// `second` events, replayed): its legend at rest gives each one's figures of the last second.
fn watched_in_chromium(dir: &std::path::Path, tmp: &std::path::Path, seen: &[(i64, String, serde_json::Value)]) {
    let Some(bin) = crate::report_browser::chromium() else {
        crate::common::skip_unless_required("chromium is not installed (Debian package `chromium`)");
        return;
    };
    let port = free_port();
    let child = Command::new(BIN)
        .args(["watch", "--live", &format!("127.0.0.1:{port}")])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("perflab watch");
    let _watch = Kill(child);
    drop(connect(port));
    let dom = crate::report_browser::headless(bin, &tmp.join("chromium"))
        .args(["--virtual-time-budget=5000", "--dump-dom", &format!("http://127.0.0.1:{port}/")])
        .output()
        .expect("chromium");
    assert!(dom.status.success(), "chromium failed: {}", String::from_utf8_lossy(&dom.stderr));
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.contains("run complete: 2 ok, 0 failed"), "the run's end: {dom}");
    assert!(dom.contains(r#"<span id="trials-done">2</span>"#), "both trials: {dom}");
    assert_eq!(dom.matches(r#"class="trial-ended""#).count(), 2, "both trials' rows");
    assert!(dom.contains(r#"id="report-link" href="report""#), "the report's link");
    assert!(dom.contains("uplot"), "the charts are drawn");
    for external in [r#"src="http"#, r#"href="http"#, r#"src="//"#] {
        assert!(!dom.contains(external), "nothing from elsewhere: {external}");
    }
    let load = dom.split(r#"id="chart-load""#).nth(1).expect("the load chart");
    let rows = crate::report_browser::legend_rows(load);
    let labels: Vec<&str> = rows.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        labels,
        ["s", "#1 per s", "#1 p50 ms", "#1 p99 ms", "#2 per s", "#2 p50 ms", "#2 p99 ms"],
        "the earlier repetition behind the last: {rows:?}"
    );
    let x: f64 = rows[0].1.parse().expect("the legend's second");
    for (k, rep) in [(1usize, 1u32), (4, 2)] {
        let trial = seen
            .iter()
            .find(|(_, kind, d)| kind == "trial_start" && d["repetition"] == rep)
            .map(|(_, _, d)| d["trial"].clone())
            .expect("its start");
        let second = seen
            .iter()
            .find(|(_, kind, d)| kind == "second" && d["trial"] == trial && d["t_s"].as_f64() == Some(x));
        let Some((_, _, s)) = second else {
            assert_eq!(rows[k].1, "–", "#{rep} has no second {x}: {rows:?}");
            continue;
        };
        let per_s = s["responses"].as_f64().expect("responses") / s["span_s"].as_f64().unwrap_or(1.0);
        assert!(
            crate::report_browser::same_to_4_digits(&rows[k].1, per_s),
            "#{rep} at {x} s: {rows:?} vs {s}"
        );
        let p99 = s["p99_ms"].as_f64().expect("p99");
        assert!(
            crate::report_browser::same_to_4_digits(&rows[k + 2].1, p99),
            "#{rep} p99: {rows:?} vs {s}"
        );
    }
    ci_panel(&dom, seen);
}

/// The page's adaptive-repetitions panel, from the run's `ci` event: the point's row (its CI's
/// half-width after the round, the target, why it stopped) and its chart (the point's line and the
/// target's).
fn ci_panel(dom: &str, seen: &[(i64, String, serde_json::Value)]) {
    let (_, _, ci) = seen.iter().find(|(_, k, _)| k == "ci").expect("a ci event after the round");
    let stopped = ci["stopped"].as_str().expect("stopped at max");
    assert!(!dom.contains(r#"<div id="ci-box" hidden"#), "shown once a ci event came");
    let row = dom.split(r#"<tr class="ci-point">"#).nth(1).expect("the point's row");
    let row = row.split("</tr>").next().expect("row");
    let hw = ci["half_width_pct"].as_f64().expect("half-width");
    let cells: Vec<&str> = row.split("<td>").skip(1).map(|c| c.trim_end_matches("</td>")).collect();
    assert_eq!(cells.len(), 4, "{row}");
    assert_eq!(cells[0], "the only point", "{row}");
    let shown = cells[1]
        .strip_prefix("2: ±")
        .and_then(|c| c.strip_suffix(" %"))
        .expect("round 2's half-width");
    assert!(crate::report_browser::same_to_4_digits(shown, hw), "{row} vs {ci}");
    assert_eq!(cells[2], "±50 %", "{row}");
    assert_eq!(cells[3], format!("stopped: {stopped}"), "{row}");
    let chart = dom.split(r#"id="chart-ci""#).nth(1).expect("the CI chart");
    let rows = crate::report_browser::legend_rows(chart);
    let labels: Vec<&str> = rows.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, ["repetitions", "the only point ±%", "target ±%"], "{rows:?}");
    assert_eq!((rows[0].1.as_str(), rows[2].1.as_str()), ("2", "50"), "{rows:?}");
    assert!(crate::report_browser::same_to_4_digits(&rows[1].1, hw), "{rows:?}");
}

/// `perflab http ... --live`: the load runs as a one-trial run (its events served while it runs,
/// its trial stored, its report written and served at `/report`), the summary printed is the
/// stored trial's, and `perflab serve` served exactly those requests (`-n` ends the load, so
/// nothing is in flight at the stop).
#[test]
fn http_live_serves_the_load_and_stores_what_it_prints() {
    let tmp = tempfile::tempdir().expect("tmp");
    let port = free_port();
    let server = Command::new(BIN)
        .args(["serve", "--port", &port.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start perflab serve");
    let mut server = Kill(server);
    connect(port);
    let runs = tmp.path().join("runs");
    let live = free_port();
    let url = format!("http://127.0.0.1:{port}/");
    let child = Command::new(BIN)
        .args(["http", &url, "-n", "3000", "-d", "5s", "-c", "2", "--quiet"])
        .arg(format!("--live=127.0.0.1:{live}"))
        .arg("--runs-dir")
        .arg(&runs)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run perflab http");
    let mut run = Kill(child);
    let (head, mut events) = get(live, "/events", "");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let mut kinds = Vec::new();
    while kinds.last().map(String::as_str) != Some("run_end") {
        kinds.push(next_event(&mut events).1);
    }
    let out = report_served(live, &mut BufReader::new(run.0.stdout.take().expect("stdout")));
    let status = run.0.wait().expect("wait");
    let mut err = String::new();
    run.0.stderr.take().expect("stderr").read_to_string(&mut err).expect("stderr");
    assert_eq!(status.code(), Some(0), "stdout: {out}\nstderr: {err}");
    assert!(kinds.iter().any(|k| k == "trial_end"), "the trial was served live: {kinds:?}");
    let dir = only_run_dir(&runs);
    assert!(out.contains(&format!("stored in {}", dir.display())), "{out}");
    report_written(&dir, &out);
    let summary = out.find("Complete requests:").expect("the summary");
    assert!(summary < out.find("stored in").expect("stored in"), "the summary first: {out}");
    let trials = Store::open(&dir).expect("open").trials().expect("trials");
    assert_eq!(trials.len(), 1);
    let stored = trials[0].metric("requests").expect("requests");
    let printed: f64 = out
        .lines()
        .find_map(|l| l.strip_prefix("Complete requests:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no Complete requests line: {out}"));
    assert_eq!((printed, stored), (3000.0, 3000.0), "{out}");
    assert!(out.contains("Percentage of the requests served within"), "{out}");
    // SIGTERM: serve prints `served N requests`.
    let _ = Command::new("kill").args(["-TERM", &server.0.id().to_string()]).status();
    let _ = server.0.wait();
    let mut served = String::new();
    server.0.stdout.take().expect("stdout").read_to_string(&mut served).expect("served");
    assert!(served.contains("served 3000 requests"), "the server's count: {served}");
}

/// `perflab load cpu ... --live`: the load runs as a one-trial run (the address it serves printed
/// at the start, its events served while it runs), its trial is stored (its report written and
/// served at `/report`), and what is printed is the command's own summary, the one stored.
#[test]
fn load_live_serves_the_load_and_stores_what_it_prints() {
    let tmp = tempfile::tempdir().expect("tmp");
    let runs = tmp.path().join("runs");
    let (mut run, port, mut err) = serving(
        Command::new(BIN)
            .args(["load", "cpu", "-d", "1s", "-w", "1", "-l", "50", "--quiet", "--live=127.0.0.1:0"])
            .arg("--runs-dir")
            .arg(&runs)
            .stdout(Stdio::piped()),
        "perflab: live: http://127.0.0.1:",
        "/",
    );
    let (head, mut events) = get(port, "/events", "");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let mut served = None;
    loop {
        let (_, kind, data) = next_event(&mut events);
        if kind == "trial_end" {
            served = data["figures"]
                .as_array()
                .and_then(|f| f.iter().find(|f| f["name"] == "ops_per_s"))
                .and_then(|f| f["value"].as_f64());
        }
        if kind == "run_end" {
            break;
        }
    }
    let out = report_served(port, &mut BufReader::new(run.0.stdout.take().expect("stdout")));
    let status = run.0.wait().expect("wait");
    let mut rest = String::new();
    err.read_to_string(&mut rest).expect("stderr");
    assert_eq!(status.code(), Some(0), "stdout: {out}\nstderr: {rest}");
    let dir = only_run_dir(&runs);
    assert!(out.contains(&format!("stored in {}", dir.display())), "{out}");
    report_written(&dir, &out);
    let trials = Store::open(&dir).expect("open").trials().expect("trials");
    assert_eq!(trials.len(), 1);
    assert_eq!(trials[0].workload, "cpu");
    let stored = trials[0].metric("ops_per_s").expect("ops_per_s");
    assert!(stored > 0.0, "{out}");
    // (Equal to the last bit but for serde_json's parsing of the text, as above.)
    let served = served.expect("the trial_end event's ops_per_s");
    assert!(
        (served - stored).abs() <= 1e-12 * stored,
        "the trial_end event carries the stored figure: {served} vs {stored}"
    );
    // What is printed is `perflab load cpu`'s own summary, as without --live: the lines the
    // workload kept with the stored trial, its work figure the stored one.
    let store = Store::open(&dir).expect("open");
    let kept = store.raw_output(trials[0].id).expect("raw lines");
    assert!(kept[0].starts_with("cpu load: 1 worker(s) at 50 % each"), "{kept:?}");
    assert!(out.starts_with(&(kept.join("\n") + "\n")), "the stored summary first: {out}");
    let work = out
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("work:"))
        .unwrap_or_else(|| panic!("no work line: {out}"));
    assert!(work.trim().starts_with(&format!("{stored:.0} ops/s,")), "{work} vs {stored}");
}

/// Start `cmd` (its stderr piped) and read the port it serves from its first line on stderr,
/// `prefix` PORT `suffix`; the rest of its stderr to read (kept open: the command writes to it).
fn serving(cmd: &mut Command, prefix: &str, suffix: &str) -> (Kill, u16, BufReader<std::process::ChildStderr>) {
    let mut child = Kill(cmd.stderr(Stdio::piped()).spawn().expect("start perflab"));
    let mut err = BufReader::new(child.0.stderr.take().expect("stderr"));
    let mut line = String::new();
    err.read_line(&mut line).expect("the address line");
    let port = line
        .trim_end()
        .strip_prefix(prefix)
        .and_then(|r| r.strip_suffix(suffix))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("the address it serves: {line}"));
    (child, port, err)
}
