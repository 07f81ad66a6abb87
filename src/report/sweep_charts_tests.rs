//! Tests of the sweep charts: which lines and panels a sweep draws, and where a CI is drawn.

use super::*;

fn cell(metric: &str, variant: &str, at: &str, x: &str, value: f64) -> AnswerCell {
    AnswerCell {
        metric: metric.into(),
        label: metric.into(),
        part: None,
        figure: metric.into(),
        headline: true,
        text: None,
        row: String::new(),
        point: String::new(),
        dims: Vec::new(),
        unit: "req/s".into(),
        variant: variant.into(),
        at: at.into(),
        x: Some(x.into()),
        value,
        sd: None,
        ci95: None,
        before: None,
        delta_pct: None,
        ci95_pct: None,
        verdict: None,
        flag: None,
        text_compares: false,
        n: 3,
    }
}

#[test]
fn groups_an_order_of_magnitude_apart_get_a_panel_each() {
    let cells = [
        cell("rps", "pool", "size=37", "2", 9000.0),
        cell("rps", "threads", "size=37", "2", 8000.0),
        cell("rps", "pool", "size=10485760", "2", 40.0),
        cell("rps", "threads", "size=10485760", "2", 41.0),
    ];
    let refs: Vec<&AnswerCell> = cells.iter().collect();
    let p = panels(&refs, &[("rps", Stroke::Solid)], Some("model"));
    assert_eq!(p.len(), 2);
    assert_eq!(p[0].title, "size=37");
    assert_eq!(
        p[1].series.iter().map(|s| s.label.as_str()).collect::<Vec<_>>(),
        ["pool", "threads"]
    );
    // Same scale: one panel, the group in the label.
    let close = [
        cell("rps", "pool", "size=37", "2", 9000.0),
        cell("rps", "pool", "size=1000", "2", 3000.0),
    ];
    let refs: Vec<&AnswerCell> = close.iter().collect();
    let p = panels(&refs, &[("rps", Stroke::Solid)], Some("model"));
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].series[1].label, "pool, size=1000");
}

#[test]
fn a_text_x_parameter_gets_bars() {
    let cells = [
        cell("iops", "before", "", "sequential", 900.0),
        cell("iops", "after", "", "sequential", 950.0),
        cell("iops", "before", "", "random", 120.0),
        cell("iops", "after", "", "random", 180.0),
    ];
    let refs: Vec<&AnswerCell> = cells.iter().collect();
    let xs: Vec<XValue> = cells.iter().map(|c| xvalue(c.x.as_deref().unwrap())).collect();
    let axis = XAxis::new(&xs, None);
    assert_eq!(axis.kind, XKind::Categorical);
    let p = panels(&refs, &[("iops", Stroke::Solid)], Some("variant"));
    let svg = draw("iops vs pattern", "iops", "pattern", &axis, &p, Some("variant")).unwrap();
    let texts: Vec<&str> = svg.lines().map(str::trim).collect();
    assert!(texts.contains(&"sequential") && texts.contains(&"random"), "{svg}");
    // Four bars (filled rectangles in the two series' colours), no polyline.
    let bars = svg.matches("fill=\"#1F77B4\"").count() + svg.matches("fill=\"#FF7F0E\"").count();
    assert!(bars >= 4, "{svg}");
    assert!(!svg.contains("stroke-width=\"2\" points="), "bars, not lines: {svg}");
}

#[test]
fn percentile_keys() {
    assert!(is_percentile("p99") && is_percentile("p99.9") && is_percentile("p50"));
    assert!(!is_percentile("pool") && !is_percentile("requests_per_s"));
}

#[test]
fn a_ci_is_drawn_only_where_the_tables_show_one() {
    let mut c = cell("requests_per_s", "all", "", "2", 10691.0);
    c.ci95 = Some(54919.0);
    c.n = 2;
    assert_eq!(drawn_ci(&c), None, "2 repetitions: t = 12.7, the table says –");
    c.n = 3;
    assert_eq!(drawn_ci(&c), None, "wider than the value");
    c.ci95 = Some(800.0);
    assert_eq!(drawn_ci(&c), Some(800.0));
}
