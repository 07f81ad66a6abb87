//! The view drawn headless (ratatui's `TestBackend`), checked against snapshot texts.

use super::*;
use crate::live::event::{Event, Figure, HostNow, PlannedPoint, PlannedTrial};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

/// A run of 2 points × 2 repetitions: trial 0 stored, trial 1 in its load for 12 s.
fn board() -> Board {
    let mut b = Board::default();
    let trials = (0..4)
        .map(|i| PlannedTrial {
            trial: i,
            point: i / 2,
            repetition: (i % 2) as u32 + 1,
        })
        .collect();
    let points = (0..2)
        .map(|p| PlannedPoint {
            point: p,
            label: format!("connections={}", 10 * (p + 1)),
            params: serde_json::json!({"connections": 10 * (p + 1)}),
        })
        .collect();
    let events = vec![
        Event::RunStart {
            plan: "web".into(),
            dir: "runs/x".into(),
            trials,
            points,
            done: vec![],
            baseline_s: 1.0,
            warmup_s: 1.0,
            load_s: 30.0,
            recovery_s: 1.0,
            interval_s: 1.0,
        },
        Event::TrialStart {
            trial: 0,
            point: 0,
            repetition: 1,
            label: "connections=10".into(),
            asked_per_s: None,
        },
        Event::TrialEnd {
            trial: 0,
            ok: true,
            failure: None,
            figures: vec![
                Figure {
                    name: "requests_per_s".into(),
                    value: 401.2,
                    unit: "req/s".into(),
                },
                Figure {
                    name: "latency_p99_ms".into(),
                    value: 1.94,
                    unit: "ms".into(),
                },
            ],
            phases: vec![],
        },
        Event::TrialStart {
            trial: 1,
            point: 0,
            repetition: 2,
            label: "connections=10".into(),
            asked_per_s: Some(400.0),
        },
        Event::Phase {
            trial: 1,
            phase: "load".into(),
            t_s: 2.0,
        },
    ];
    for e in events {
        b.apply(e, 1000.0);
    }
    for i in 0..12u64 {
        b.apply(
            Event::Second {
                trial: 1,
                t_s: i as f64,
                span_s: 1.0,
                responses: 300 + 10 * i,
                errors: u64::from(i == 5),
                p50_ms: Some(0.25),
                p99_ms: Some(1.0 + i as f64 / 10.0),
                p999_ms: None,
                host: Some(HostNow {
                    cpu_pct: Some(35.5),
                    mem_used_mb: Some(2048.0),
                    loadgen_cpu_pct: Some(12.0),
                    target_cpu_pct: Some(40.1),
                    busiest_cpu_pct: Some(71.0),
                    disk_util_pct: Some(3.0),
                    net_mbit_s: Some(120.5),
                    target_rss_mb: Some(35.6),
                }),
            },
            1001.0 + i as f64,
        );
    }
    b
}

/// The frame's text, a line per row (trailing blanks cut).
fn text(b: &Board, ui: &Ui, w: u16, h: u16) -> Vec<String> {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| draw(f, b, ui)).expect("draw");
    let buf = t.backend().buffer().clone();
    (0..h)
        .map(|y| {
            let row: String = (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect();
            row.trim_end().to_string()
        })
        .collect()
}

fn ui() -> Ui {
    Ui {
        now_unix_s: 1015.0,
        ..Ui::default()
    }
}

#[test]
fn an_80_by_24_terminal_shows_every_panel() {
    let got = text(&board(), &ui(), 80, 24);
    let want = [
        "perflab web · trials done 1/4 · connections=10 #2 · load 15 s",
        "┌ trials (✓ ok ✗ failed ▶ now) ┐┌ the latest second ───────────────────────────┐",
        "│connections=10 ✓ ▶            ││throughput  410/s                             │",
        "│connections=20 · ·            ││errors      0.00/s · 1 in the trial           │",
        "│                              ││latency ms  p50 0.250 · p99 2.10              │",
        "│                              ││asked       400/s · achieved 102.5 %          │",
        "│                              ││host CPU    35.5 % · memory used 2048.0 MiB   │",
        "│                              ││busiest     CPU 71.0 % · disk 3.0 %           │",
        "│                              ││network     120.5 Mbit/s on the busiest link  │",
        "│                              ││perflab CPU 12.0 % · target 40.1 %, 35.6 MiB  │",
        "└──────────────────────────────┘└──────────────────────────────────────────────┘",
        "┌ throughput /s of trial 1, last 60 s · max 410 ───────────────────────────────┐",
        "│                                                                  ▃▄▄▄▅▅▆▆▆▇▇█│",
        "│                                                                  ████████████│",
        "└──────────────────────────────────────────────────────────────────────────────┘",
        "┌ p99 ms of trial 1, last 60 s · max 2.10 ─────────────────────────────────────┐",
        "│                                                                    ▁▁▂▃▄▄▅▆▇█│",
        "│                                                                  ▇███████████│",
        "└──────────────────────────────────────────────────────────────────────────────┘",
        "┌ last stored trial ───────────────────────────────────────────────────────────┐",
        "│trial 0 (connections=10 #1): requests_per_s 401 req/s, latency_p99_ms 1.94 ms │",
        "│                                                                              │",
        "└──────────────────────────────────────────────────────────────────────────────┘",
        " q stop (as Ctrl-C) · +/- window 60 s · p hold",
    ];
    assert_eq!(got, want, "\n{}", got.join("\n"));
}

#[test]
fn a_tiny_or_odd_window_never_panics_and_20_by_5_still_shows_the_counter() {
    let b = board();
    for (w, h) in [(0, 0), (1, 1), (20, 5), (39, 11), (40, 12), (41, 8), (200, 3), (3, 200), (120, 50)] {
        let lines = text(&b, &ui(), w, h);
        assert_eq!(lines.len(), h as usize);
    }
    let small = text(&b, &ui(), 20, 5);
    assert_eq!(
        small,
        [
            "perflab web",
            "trials done 1/4",
            "410/s p99 2.10 ms",
            "connections=10 #2 ·",
            "q stop"
        ],
        "\n{}",
        small.join("\n")
    );
    // Nothing yet: the start, in any size.
    for (w, h) in [(20, 5), (80, 24)] {
        assert!(text(&Board::default(), &Ui::default(), w, h)
            .iter()
            .any(|l| l.contains("trials done 0/0")));
    }
}

#[test]
fn plus_and_minus_step_the_history_window_within_its_bounds() {
    let b = board();
    let mut ui = ui();
    ui.widen(false);
    assert_eq!(ui.window_s(), 30);
    ui.widen(false);
    ui.widen(false);
    assert_eq!(ui.window_s(), 10);
    // A 10 s window draws the last 10 seconds: their largest is the 12th second's.
    assert!(text(&b, &ui, 80, 24)[11].contains("of trial 1, last 10 s · max 410"));
    for _ in 0..10 {
        ui.widen(true);
    }
    assert_eq!(ui.window_s(), 600);
    assert!(text(&b, &ui, 80, 24)[23].contains("window 600 s"));
}

#[test]
fn the_probes_panel_shows_each_probes_latest_figures() {
    let mut b = board();
    let probe = |name: &str, outcome: &str, rtt_ms: Option<f64>| crate::live::event::ProbeNow {
        name: name.into(),
        kind: "tcp".into(),
        n: 120,
        lost: 3,
        failed: 0,
        seq: Some(119),
        phase: Some("load".into()),
        outcome: Some(outcome.into()),
        rtt_ms,
    };
    b.apply(
        Event::Probes {
            trial: 1,
            probes: vec![probe("connect", "reply", Some(0.125)), probe("db", "timeout", None)],
        },
        1014.0,
    );
    let got = text(&b, &ui(), 80, 30);
    let at = got
        .iter()
        .position(|l| l.starts_with("┌ probes of trial 1 "))
        .unwrap_or_else(|| panic!("\n{}", got.join("\n")));
    assert_eq!(
        got[at + 1],
        "│connect (tcp): latest 0.125 ms · lost 3/120 · failed 0                        │"
    );
    assert_eq!(
        got[at + 2],
        "│db (tcp): latest timeout · lost 3/120 · failed 0                              │"
    );
    b.apply(
        Event::Host {
            trial: 1,
            host: "db".into(),
            t_s: 13.0,
            figures: HostNow {
                cpu_pct: Some(42.5),
                mem_used_mb: Some(2048.0),
                busiest_cpu_pct: Some(97.0),
                target_cpu_pct: Some(180.0),
                target_rss_mb: Some(64.0),
                ..HostNow::default()
            },
        },
        1014.5,
    );
    let got = text(&b, &ui(), 80, 30);
    let at = got
        .iter()
        .position(|l| l.starts_with("┌ remote hosts, latest sample "))
        .unwrap_or_else(|| panic!("\n{}", got.join("\n")));
    assert_eq!(
        got[at + 1],
        "│db: CPU 42.5 % · mem 2048.0 MiB · busiest CPU 97.0 % · disk – · net – · target│"
    );
    b.apply(
        Event::Threshold {
            expr: "latency_p99_ms < 5".into(),
            point: 0,
            observed: Some(7.25),
            basis: "mean of 2 trials".into(),
            passed: false,
        },
        1014.6,
    );
    let got = text(&b, &ui(), 80, 30);
    assert!(got[0].contains("1 threshold broken so far"), "{}", got[0]);
    assert!(
        got.iter()
            .any(|l| l.contains("✗ threshold latency_p99_ms < 5 at point 0: observed 7.25")),
        "\n{}",
        got.join("\n")
    );
    // A tiny window still never panics.
    for (w, h) in [(40, 12), (80, 14), (80, 24), (20, 5)] {
        assert_eq!(text(&b, &ui(), w, h).len(), h as usize);
    }
}
