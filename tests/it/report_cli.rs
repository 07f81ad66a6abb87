//! `perflab report` / `perflab compare` from the command line: files written, summary printed, bad
//! input is one line with exit code 2.

use crate::report_common;

use assert_cmd::Command;

/// `perflab report --format FORMATS` of a synthetic run made under `dir`: the output directory and
/// what the command printed.
fn report_of_a_synthetic_run(dir: &std::path::Path, formats: &str) -> (std::path::PathBuf, std::process::Output) {
    let run = dir.join("run");
    report_common::synthetic_run(&run);
    let out = dir.join("out");
    let o = Command::cargo_bin("perflab")
        .unwrap()
        .arg("report")
        .arg(&run)
        .args(["--format", formats, "--out"])
        .arg(&out)
        .output()
        .unwrap();
    (out, o)
}

#[test]
fn report_writes_the_chosen_formats_and_prints_a_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, o) = report_of_a_synthetic_run(tmp.path(), "md,json");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("Summary"));
    assert!(stdout.contains("requests/s"));
    assert!(!stdout.contains(report_common::SECRET));
    assert!(out.join("report.md").is_file());
    assert!(out.join("report.json").is_file());
    assert!(!out.join("report.html").exists());
}

#[test]
fn compare_writes_into_the_second_run() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    report_common::synthetic_run(&a);
    report_common::synthetic_run(&b);
    let o = Command::cargo_bin("perflab")
        .unwrap()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(b.join("compare").join("report.html").is_file());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("no significant"));
}

#[test]
fn a_directory_that_is_not_a_run_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::cargo_bin("perflab")
        .unwrap()
        .arg("report")
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("not a perflab run directory"));

    let o = Command::cargo_bin("perflab")
        .unwrap()
        .args(["report", "--format", "pdf"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// The `width="…"` of an SVG's root element.
fn svg_width(svg: &str) -> u32 {
    let root = &svg[svg.find("<svg").unwrap()..];
    let w = &root[root.find("width=\"").unwrap() + 7..];
    w[..w.find('"').unwrap()].parse().unwrap()
}

#[test]
fn png_writes_every_chart_as_a_png_beside_its_svg() {
    use resvg::tiny_skia::Pixmap;
    let tmp = tempfile::tempdir().unwrap();
    let (out, o) = report_of_a_synthetic_run(tmp.path(), "md,png");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("report.md").is_file());
    let charts = out.join("charts");
    let mut svgs: Vec<_> = std::fs::read_dir(&charts)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .collect();
    svgs.sort();
    assert!(svgs.len() >= 3, "{svgs:?}");
    let pngs = std::fs::read_dir(&charts)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|e| e == "png"))
        .count();
    assert_eq!(pngs, svgs.len(), "one PNG per SVG");
    for svg in &svgs {
        let png_path = svg.with_extension("png");
        let bytes = std::fs::read(&png_path).unwrap_or_else(|e| panic!("{}: {e}", png_path.display()));
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", png_path.display());
        let img = Pixmap::decode_png(&bytes).unwrap();
        assert!(img.width() > 0 && img.height() > 0);
        assert_eq!(
            img.width(),
            svg_width(&std::fs::read_to_string(svg).unwrap()),
            "{}",
            png_path.display()
        );
        let px = img.pixels();
        let white = px.iter().filter(|p| (p.red(), p.green(), p.blue()) == (255, 255, 255)).count();
        let dark = px.iter().filter(|p| p.red() < 100 && p.green() < 100 && p.blue() < 100).count();
        assert!(white > px.len() / 4, "a white background: {}", png_path.display());
        assert!(dark > 200, "axes and labels drawn: {} dark pixels in {}", dark, png_path.display());
    }
}

#[test]
fn png_is_written_only_when_asked_for() {
    assert!(!perflab::report::Formats::all().exporters().any(|e| e.name() == "png"));
    assert!(perflab::report::Formats::parse("html,png")
        .unwrap()
        .exporters()
        .any(|e| e.name() == "png"));
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    report_common::synthetic_run(&run);
    let paths = perflab::report::write_report(&run).unwrap();
    assert!(!paths.charts.is_empty());
    assert!(
        paths.charts.iter().all(|p| p.extension().is_some_and(|e| e == "svg")),
        "{:?}",
        paths.charts
    );
}
