//! One frame of the terminal view, drawn from the [`Board`]'s aggregates: the header (the run, the
//! trial counter, the current trial and its phase), the trial grid, the latest second's figures,
//! the throughput and p99 of the last seconds, the last stored trial, the keys. A window too small
//! for the panels gets the header's facts on as many lines as it has.

use super::board::{Board, Cell, Sec, WINDOWS};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, RenderDirection, Sparkline};
use ratatui::Frame;

/// What the view adds to the board: the history window, a message for the footer, the time.
#[derive(Clone, Debug, PartialEq)]
pub struct Ui {
    /// Index into [`WINDOWS`].
    pub window: usize,
    /// Said in the footer (what a key did).
    pub message: Option<String>,
    /// Now (Unix s): how long the current phase has run.
    pub now_unix_s: f64,
}

impl Default for Ui {
    fn default() -> Ui {
        Ui {
            window: 2,
            message: None,
            now_unix_s: 0.0,
        }
    }
}

impl Ui {
    pub fn window_s(&self) -> usize {
        WINDOWS[self.window.min(WINDOWS.len() - 1)]
    }

    /// `+`: a longer window; `-`: a shorter one.
    pub fn widen(&mut self, longer: bool) {
        self.window = if longer {
            (self.window + 1).min(WINDOWS.len() - 1)
        } else {
            self.window.saturating_sub(1)
        };
    }
}

/// Whole numbers from 100 up, two decimals from 1, three significant digits below.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        "–".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 || v == 0.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn opt(v: Option<f64>, unit: &str) -> String {
    v.map_or_else(|| "–".into(), |v| format!("{}{unit}", num(v)))
}

/// A percentage or a MiB figure, to 0.1 (the feed's own precision).
fn tenth(v: Option<f64>, unit: &str) -> String {
    v.map_or_else(|| "–".into(), |v| format!("{v:.1}{unit}"))
}

/// The header's facts: the run, the counter, the current trial and its phase (with how long it has
/// run, while the run runs), the run's status once it ended.
fn header(b: &Board, ui: &Ui) -> Vec<String> {
    let (done, planned) = b.counter();
    let mut counter = format!("trials done {done}/{planned}");
    if b.failed() > 0 {
        counter.push_str(&format!(" ({} failed)", b.failed()));
    }
    match b.thresholds_broken() {
        (_, 0) => {}
        (0, n) => counter.push_str(&format!(" · {n} thresholds held so far")),
        (1, _) => counter.push_str(" · 1 threshold broken so far"),
        (k, _) => counter.push_str(&format!(" · {k} thresholds broken so far")),
    }
    let now = match (&b.current, &b.status) {
        (_, Some(status)) => format!("run {status}"),
        (Some(c), None) => {
            let mut s = format!("{} #{} · {}", c.label, c.repetition, c.phase);
            let for_s = ui.now_unix_s - c.phase_unix_s;
            if ui.now_unix_s > 0.0 && for_s >= 0.0 {
                s.push_str(&format!(" {for_s:.0} s"));
            }
            s
        }
        (None, None) => "starting".into(),
    };
    let run = if b.run.is_empty() {
        "perflab".to_string()
    } else {
        format!("perflab {}", b.run)
    };
    vec![run, counter, now]
}

/// The latest second measured (the current trial's, or until its first the previous trial's).
fn latest(b: &Board) -> Option<Sec> {
    b.seconds.back().copied()
}

/// The frame.
pub fn draw(f: &mut Frame, b: &Board, ui: &Ui) {
    let area = f.area();
    if area.width < 40 || area.height < 12 {
        compact(f, area, b, ui);
        return;
    }
    let grid = b.grid();
    // The latest second's panel: 4 rows of load and 4 of the host (+ its borders).
    let top_h = (grid.len() as u16 + 2).clamp(if b.host.is_some() { 10 } else { 8 }, 10);
    let probes_h = b.probes.as_ref().map_or(0, |(_, p)| p.len().min(4) as u16 + 2);
    let hosts_h = if b.hosts.is_empty() { 0 } else { b.hosts.len().min(4) as u16 + 2 };
    let [head, top, thr, lat, probes, hosts, last, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(top_h),
        Constraint::Min(3),
        Constraint::Min(3),
        Constraint::Length(probes_h),
        Constraint::Length(hosts_h),
        Constraint::Length(4),
        Constraint::Length(1),
    ])
    .areas(area);
    let h = header(b, ui);
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(h[0].clone(), Style::new().add_modifier(Modifier::BOLD)),
            Span::raw(format!(" · {} · {}", h[1], h[2])),
        ])),
        head,
    );
    let [left, right] = Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(top);
    f.render_widget(grid_panel(&grid, left.height.saturating_sub(2) as usize), left);
    f.render_widget(now_panel(b), right);
    let window = ui.window_s();
    // Newest first, drawn from the right edge leftwards.
    let inner = thr.width.saturating_sub(2) as usize;
    let seconds: Vec<Sec> = b.seconds.iter().rev().take(window.min(inner)).copied().collect();
    let of = b.seconds_of.map(|t| format!(" of trial {t}")).unwrap_or_default();
    let per_s: Vec<u64> = seconds.iter().map(|s| s.per_s.round() as u64).collect();
    f.render_widget(spark(&format!("throughput /s{of}"), &per_s, window, 1.0, Color::Cyan), thr);
    let p99: Vec<u64> = seconds.iter().map(|s| (s.p99_ms.unwrap_or(0.0) * 1000.0).round() as u64).collect();
    f.render_widget(spark(&format!("p99 ms{of}"), &p99, window, 1000.0, Color::Magenta), lat);
    if probes_h > 0 {
        f.render_widget(probes_panel(b), probes);
    }
    if hosts_h > 0 {
        f.render_widget(hosts_panel(b), hosts);
    }
    f.render_widget(last_panel(b), last);
    let keys = format!(
        " q stop (as Ctrl-C) · +/- window {window} s · p hold{}",
        ui.message.as_ref().map(|m| format!(" · {m}")).unwrap_or_default()
    );
    f.render_widget(Paragraph::new(keys).style(Style::new().fg(Color::DarkGray)), foot);
}

/// A small window: the facts, one a line, as many as fit.
fn compact(f: &mut Frame, area: Rect, b: &Board, ui: &Ui) {
    let mut lines = header(b, ui);
    if let Some(s) = latest(b) {
        lines.insert(2, format!("{}/s p99 {}", num(s.per_s), opt(s.p99_ms, " ms")));
    }
    lines.push("q stop".into());
    f.render_widget(Paragraph::new(lines.into_iter().map(Line::from).collect::<Vec<_>>()), area);
}

fn grid_panel(grid: &[(String, Vec<Cell>)], rows: usize) -> Paragraph<'static> {
    let width = grid.iter().map(|g| g.0.chars().count()).max().unwrap_or(0).min(24);
    let mut lines: Vec<Line> = grid
        .iter()
        .take(rows)
        .map(|(label, cells)| {
            let mut spans = vec![Span::raw(format!("{:width$} ", label.chars().take(width).collect::<String>()))];
            for c in cells {
                spans.push(match c {
                    Cell::Planned => Span::styled("· ", Style::new().fg(Color::DarkGray)),
                    Cell::Running => Span::styled("▶ ", Style::new().fg(Color::Yellow)),
                    Cell::Ok => Span::styled("✓ ", Style::new().fg(Color::Green)),
                    Cell::Failed => Span::styled("✗ ", Style::new().fg(Color::Red)),
                });
            }
            Line::from(spans)
        })
        .collect();
    if grid.len() > rows && rows > 0 {
        lines.truncate(rows - 1);
        lines.push(Line::raw(format!("… {} more points", grid.len() - (rows - 1))));
    }
    Paragraph::new(lines).block(Block::bordered().title(" trials (✓ ok ✗ failed ▶ now) "))
}

fn now_panel(b: &Board) -> Paragraph<'static> {
    let s = latest(b);
    let title = match b.seconds_of {
        Some(t) if b.current.as_ref().is_some_and(|c| c.trial != t) => format!(" the latest second (trial {t}) "),
        _ => " the latest second ".to_string(),
    };
    let row = |k: &str, v: String| Line::from(vec![Span::styled(format!("{k:<12}"), Style::new().fg(Color::Gray)), Span::raw(v)]);
    let mut lines = Vec::new();
    match s {
        Some(s) => {
            lines.push(row("throughput", format!("{}/s", num(s.per_s))));
            lines.push(row("errors", format!("{}/s · {} in the trial", num(s.errors_per_s), b.errors)));
            let mut lat = format!("p50 {} · p99 {}", opt(s.p50_ms, ""), opt(s.p99_ms, ""));
            if let Some(v) = s.p999_ms {
                lat.push_str(&format!(" · p999 {}", num(v)));
            }
            lines.push(row("latency ms", lat));
        }
        None => lines.push(row("load", "no second measured yet".into())),
    }
    let asked = b
        .current
        .as_ref()
        .and_then(|c| c.asked_per_s.filter(|_| b.seconds_of == Some(c.trial)));
    lines.push(row(
        "asked",
        match (asked, s) {
            (Some(a), Some(s)) if a > 0.0 => format!("{}/s · achieved {:.1} %", num(a), 100.0 * s.per_s / a),
            (Some(a), _) => format!("{}/s", num(a)),
            (None, _) => "– (a closed model: as fast as it answers)".into(),
        },
    ));
    if let Some(h) = b.host {
        lines.push(row(
            "host CPU",
            format!("{} · memory used {}", tenth(h.cpu_pct, " %"), tenth(h.mem_used_mb, " MiB")),
        ));
        lines.push(row(
            "busiest",
            format!("CPU {} · disk {}", tenth(h.busiest_cpu_pct, " %"), tenth(h.disk_util_pct, " %")),
        ));
        lines.push(row("network", tenth(h.net_mbit_s, " Mbit/s on the busiest link")));
        let rss = h.target_rss_mb.map_or(String::new(), |m| format!(", {m:.1} MiB"));
        lines.push(row(
            "perflab CPU",
            format!("{} · target {}{rss}", tenth(h.loadgen_cpu_pct, " %"), tenth(h.target_cpu_pct, " %")),
        ));
    }
    Paragraph::new(lines).block(Block::bordered().title(title))
}

fn spark(what: &str, data: &[u64], window: usize, scale: f64, color: Color) -> Sparkline<'static> {
    let max = data.iter().copied().max().unwrap_or(0);
    let title = format!(" {what}, last {window} s · max {} ", num(max as f64 / scale));
    Sparkline::default()
        .block(Block::bordered().title(title))
        .data(data.to_vec())
        .direction(RenderDirection::RightToLeft)
        .style(Style::new().fg(color))
}

/// The probes' figures so far: each one's latest round trip, its losses and failures.
fn probes_panel(b: &Board) -> Paragraph<'static> {
    let Some((trial, probes)) = &b.probes else {
        return Paragraph::new("");
    };
    let lines: Vec<Line> = probes
        .iter()
        .map(|p| {
            let latest = match (&p.outcome, p.rtt_ms) {
                (Some(o), Some(ms)) if o == "reply" => format!("{} ms", num(ms)),
                (Some(o), Some(ms)) => format!("{o} {} ms", num(ms)),
                (Some(o), None) => o.clone(),
                (None, _) => "–".into(),
            };
            Line::raw(format!(
                "{} ({}): latest {latest} · lost {}/{} · failed {}",
                p.name, p.kind, p.lost, p.n, p.failed
            ))
        })
        .collect();
    Paragraph::new(lines).block(Block::bordered().title(format!(" probes of trial {trial} ")))
}

/// The remote hosts' latest key figures, a line each.
fn hosts_panel(b: &Board) -> Paragraph<'static> {
    let lines: Vec<Line> = b
        .hosts
        .iter()
        .map(|(name, h)| {
            let mut parts = Vec::new();
            if h.cpu_pct.is_some() || h.mem_used_mb.is_some() {
                parts.push(format!("CPU {} · mem {}", tenth(h.cpu_pct, " %"), tenth(h.mem_used_mb, " MiB")));
                parts.push(format!("busiest CPU {}", tenth(h.busiest_cpu_pct, " %")));
                parts.push(format!("disk {}", tenth(h.disk_util_pct, " %")));
                parts.push(format!("net {}", tenth(h.net_mbit_s, " Mbit/s")));
            }
            if h.target_cpu_pct.is_some() || h.target_rss_mb.is_some() {
                parts.push(format!(
                    "target {} {}",
                    tenth(h.target_cpu_pct, " %"),
                    tenth(h.target_rss_mb, " MiB")
                ));
            }
            Line::raw(format!("{name}: {}", parts.join(" · ")))
        })
        .collect();
    Paragraph::new(lines).block(Block::bordered().title(" remote hosts, latest sample "))
}

fn last_panel(b: &Board) -> Paragraph<'static> {
    let mut lines = Vec::new();
    match &b.last_end {
        Some((trial, label, figures)) => {
            let figs: Vec<String> = figures.iter().map(|f| format!("{} {} {}", f.name, num(f.value), f.unit)).collect();
            lines.push(Line::raw(format!("trial {trial} ({label}): {}", figs.join(", "))));
        }
        None => lines.push(Line::raw("none stored yet")),
    }
    if let Some(((expr, point), (_, observed))) = b.thresholds.iter().find(|t| !t.1 .0) {
        let seen = observed.map_or_else(|| "no data".to_string(), |v| format!("observed {}", num(v)));
        lines.push(Line::styled(
            format!("✗ threshold {expr} at point {point}: {seen}"),
            Style::new().fg(Color::Red),
        ));
    }
    if let Some((trial, why)) = &b.last_failure {
        lines.push(Line::styled(format!("✗ trial {trial}: {why}"), Style::new().fg(Color::Red)));
    } else if let Some((point, (hw, target, reps))) = b.ci.iter().next_back() {
        lines.push(Line::raw(format!(
            "point {point}: 95 % CI ±{} of the mean after {reps} repetitions (target ±{} %)",
            opt(*hw, " %"),
            num(*target)
        )));
    }
    if b.skipped > 0 {
        lines.push(Line::raw(format!("the feed dropped {} events (it fell behind)", b.skipped)));
    }
    Paragraph::new(lines).block(Block::bordered().title(" last stored trial "))
}

#[cfg(test)]
#[path = "draw_tests.rs"]
mod tests;
