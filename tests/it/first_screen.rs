//! The harness of `examples_first_screen`: run a seed example shortened (a copy of its plan with
//! phases of a second or two, one repetition, the tools' own durations, sizes and files shortened,
//! free ports), write its report, and read its first screens: the first 60 lines of report.md, and
//! the text of report.html visible at 1400×900 in headless Chromium (a copy of the page with a
//! script listing the visible headings, paragraphs and table rows; content, not pixels). A
//! copy of each run is kept under `PERFLAB_FIRST_SCREEN_KEEP=DIR` when it is set, and
//! `PERFLAB_FIRST_SCREEN_SOFT=1` prints what fails instead of stopping at the first example. A
//! [`Check`] is one thing a first screen must hold; [`judge`] asserts them and the body's length.

use crate::common::{free_port, run_shortened, skip_unless_required, Short};
use perflab::plan;
use perflab::store::RunStatus;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_perflab");
/// The first screen of report.md.
pub const MD_LINES: usize = 60;
/// The most lines report.md may have before its appendix.
pub const BODY_LINES: usize = 300;
/// The viewport the HTML report is read at.
pub const WINDOW: (u32, u32) = (1400, 900);

/// One example, shortened.
pub struct Example {
    /// The file name under examples/ (or "demo" for `perflab demo`'s plan).
    pub file: &'static str,
    /// The ports it names, each replaced by a free one.
    pub ports: &'static [&'static str],
    /// Which points run (by label).
    pub keep: fn(&str) -> bool,
}

/// A report read: its directory, its body (report.md before the appendix), the first 60 lines of
/// report.md and the HTML's visible text (None without Chromium).
pub struct Report {
    pub name: String,
    pub dir: PathBuf,
    pub body_lines: usize,
    pub md: Vec<String>,
    pub html: Option<Vec<String>>,
}

/// Does a first screen (its lines) hold something?
pub type Holds = Box<dyn Fn(&[String]) -> bool>;

/// One thing a first screen must hold.
pub struct Check {
    pub what: &'static str,
    pub holds: Holds,
}

pub fn check(what: &'static str, holds: impl Fn(&[String]) -> bool + 'static) -> Check {
    Check {
        what,
        holds: Box::new(holds),
    }
}

/// The cells of a table line ("| a | b |"), trimmed, without the row's anchor (`<a id="…"></a>`
/// before the first cell's text in report.md); None for any other line.
pub fn cells(line: &str) -> Option<Vec<&str>> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    let mut c: Vec<&str> = inner.split(" | ").map(str::trim).collect();
    if let Some(rest) = c[0].strip_prefix("<a id=\"").and_then(|r| r.split_once("</a>")) {
        c[0] = rest.1.trim();
    }
    Some(c)
}

/// A table row whose first cell is `first` (or starts with it, for a cell with a unit).
pub fn row<'a>(lines: &'a [String], first: &str) -> Vec<Vec<&'a str>> {
    lines
        .iter()
        .filter_map(|l| cells(l))
        .filter(|c| c.first().is_some_and(|f| *f == first || f.starts_with(&format!("{first} "))))
        .collect()
}

/// Is there a table row with first cell `first` and some cell containing each of `has`?
pub fn has_row(lines: &[String], first: &str, has: &[&str]) -> bool {
    row(lines, first)
        .iter()
        .any(|c| has.iter().all(|h| c.iter().any(|cell| cell.contains(h))))
}

/// Is there a table header with all of `names` among its cells?
pub fn has_header(lines: &[String], names: &[&str]) -> bool {
    lines.iter().filter_map(|l| cells(l)).any(|c| names.iter().all(|n| c.contains(n)))
}

pub fn has_text(lines: &[String], text: &str) -> bool {
    lines.iter().any(|l| l.contains(text))
}

/// The system table: Baseline / Under load / Peak / Recovery, with rows for CPU, memory and each
/// of `more` (a metric prefix: `disk_`, `net_lo_`).
pub fn phase_table(more: &'static [&'static str]) -> Check {
    check("Baseline / Under load / Peak / Recovery per resource", move |l| {
        has_header(l, &["Baseline", "Under load", "Peak", "Recovery"])
            && ["cpu_busy_pct", "mem_used_mb"].iter().all(|m| !row(l, m).is_empty())
            && more.iter().all(|p| l.iter().filter_map(|x| cells(x)).any(|c| c[0].starts_with(p)))
    })
}

/// Is there a table header with a column per value of `x`: "x = v" for the first, then "x = v" or
/// the bare "v" (the answer table names x in its first column only)?
pub fn has_columns(lines: &[String], x: &str, values: &[&str]) -> bool {
    lines.iter().filter_map(|l| cells(l)).any(|c| {
        let Some(first) = c.iter().position(|h| *h == format!("{x} = {}", values[0])) else {
            return false;
        };
        values[1..]
            .iter()
            .all(|v| c[first + 1..].iter().any(|h| h == v || *h == format!("{x} = {v}")))
    })
}

/// Rows whose first cell is the figure `label` (with its unit after it), under a header with a
/// column per value of `x`.
pub fn by_columns(lines: &[String], label: &str, x: &str, values: &[&str]) -> bool {
    has_columns(lines, x, values) && !row(lines, label).is_empty()
}

/// The example's plan text, shortened: the tools' durations, sizes and files, free ports.
pub fn plan_text(e: &Example, tmp: &Path) -> String {
    let mut text = if e.file == "demo" {
        let o = Command::new(BIN)
            .args(["demo", "--print-plan"])
            .output()
            .expect("perflab demo --print-plan");
        String::from_utf8(o.stdout).unwrap()
    } else {
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(e.file)).unwrap()
    };
    for port in e.ports {
        text = text.replace(port, &free_port().to_string());
    }
    let edits = [
        ("/tmp/perflab-example-", format!("{}/perflab-example-", tmp.display())),
        ("\"--timeout\", \"10s\"", "\"--timeout\", \"1s\"".into()),
        ("\"--timeout\", \"15s\"", "\"--timeout\", \"1s\"".into()),
        ("\"-t\", \"10\"", "\"-t\", \"1\"".into()),
        ("\"-n\", \"100000\"", "\"-n\", \"2000\"".into()),
        ("\"-n\", \"10000\"", "\"-n\", \"2000\"".into()),
        ("-t 10 -J", "-t 1 -J".into()),
        ("--runtime=10", "--runtime=1".into()),
        ("--time=10", "--time=1".into()),
        ("--size=1G", "--size=64M".into()),
        ("size = \"1G\"", "size = \"64M\"".into()),
        ("\"2G\"", "\"256M\"".into()),
        // Probes four times as often: a shortened tool's load (ab -n 2000, a fraction of a second)
        // is shorter than a 200 ms interval, where a probe's cell would say "– (none sent)".
        ("interval = \"200ms\"", "interval = \"50ms\"".into()),
    ];
    for (from, to) in edits {
        text = text.replace(from, &to);
    }
    text
}

/// Run the shortened example and write its report; None (said) when the run was skipped here.
pub fn run(e: &Example, text: &str, tmp: &Path) -> Option<PathBuf> {
    let label = format!("examples/{}", e.file);
    let plan = plan::parse_str(text, &label).unwrap_or_else(|err| panic!("{label}: {err:#}"));
    let short = Short {
        baseline: Duration::from_millis(600),
        load: Duration::from_millis(1500),
        recovery: Duration::from_millis(600),
        interval: Duration::from_millis(200),
    };
    let out = run_shortened(plan, short, |p| (e.keep)(&p.label), &tmp.join("runs"));
    if out.status == RunStatus::Skipped {
        skip_unless_required(&format!("{label}: every trial skipped here: {}", out.notes.join("; ")));
        return None;
    }
    assert_eq!(out.trials_failed, 0, "{label}: {out:?}");
    perflab::report::write_report(&out.dir).unwrap_or_else(|err| panic!("{label}: {err:#}"));
    Some(out.dir)
}

/// The lines of report.md before its appendix.
pub fn body_lines(md: &str) -> usize {
    md.lines().take_while(|l| *l != "## Appendix").count()
}

/// Read a report directory's first screens.
pub fn read(name: &str, dir: &Path, tmp: &Path) -> Report {
    let md = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    Report {
        name: name.to_string(),
        dir: dir.to_path_buf(),
        body_lines: body_lines(&md),
        md: md.lines().take(MD_LINES).map(str::to_string).collect(),
        html: visible(&dir.join("report.html"), tmp),
    }
}

/// Run, report and read one example; None when it was skipped here.
pub fn example(e: &Example, tmp: &Path) -> Option<Report> {
    let work = tmp.join(e.file.trim_end_matches(".toml"));
    std::fs::create_dir_all(&work).unwrap();
    let text = plan_text(e, &work);
    let dir = run(e, &text, &work)?;
    // PERFLAB_FIRST_SCREEN_KEEP=DIR keeps a copy of the run (to re-report it after a change).
    if let Some(keep) = std::env::var_os("PERFLAB_FIRST_SCREEN_KEEP") {
        let to = Path::new(&keep).join(e.file.trim_end_matches(".toml"));
        let _ = std::fs::remove_dir_all(&to);
        std::fs::create_dir_all(&to).unwrap();
        let cp = Command::new("cp").arg("-r").arg(&dir).arg(&to).status().unwrap();
        assert!(cp.success(), "cp -r {} {}", dir.display(), to.display());
    }
    Some(read(e.file, &dir, &work))
}

/// The text of report.html visible at 1400×900 in headless Chromium: headings and paragraphs, and
/// table rows as "| a | b |" (the visible cells); None (said) without Chromium.
pub fn visible(html: &Path, tmp: &Path) -> Option<Vec<String>> {
    let Some(bin) = crate::report_browser::chromium() else {
        skip_unless_required("the HTML first screen: chromium is not installed (apt-get install -y chromium)");
        return None;
    };
    // A copy with a script (the report itself allows none) that lists what is inside the window:
    // an element counts where its box, clipped by every scrolling ancestor, meets the viewport.
    let page = std::fs::read_to_string(html).unwrap();
    let page: String = page
        .lines()
        .filter(|l| !l.contains("Content-Security-Policy"))
        .collect::<Vec<_>>()
        .join("\n");
    let script = r#"<script>
const H=SCREEN_HEIGHT,W=innerWidth;
function seen(e){let r=e.getBoundingClientRect();let t=r.top,b=r.bottom,l=r.left,g=r.right;
 for(let a=e.parentElement;a;a=a.parentElement){const s=getComputedStyle(a);
  if(s.overflowX!='visible'||s.overflowY!='visible'){const q=a.getBoundingClientRect();
   t=Math.max(t,q.top);b=Math.min(b,q.bottom);l=Math.max(l,q.left);g=Math.min(g,q.right);}}
 return b>t&&g>l&&b>0&&t<H&&g>0&&l<W;}
const out=['WINDOW '+W+'x'+H];
for(const e of document.querySelectorAll('h1,h2,p,tr,figcaption')){
 if(e.tagName=='TR'){const c=[...e.cells].filter(seen).map(x=>x.innerText.trim().replace(/\s+/g,' '));
  if(c.length)out.push('| '+c.join(' | ')+' |');}
 else if(seen(e))out.push(e.innerText.trim().replace(/\s+/g,' '));}
const p=document.createElement('pre');p.textContent='SCREEN\n'+out.join('\n')+'\nEND';
p.style.position='absolute';p.style.top='100000px';document.body.appendChild(p);
</script></body>"#;
    // The layout depends on the width only (the page uses no viewport heights); headless Chromium
    // gives a 1400×900 window a shorter viewport, so the screen's height is the script's own.
    let script = script.replace("SCREEN_HEIGHT", &WINDOW.1.to_string());
    let copy = tmp.join("first-screen.html");
    std::fs::write(&copy, page.replace("</body>", &script)).unwrap();
    let o = crate::report_browser::headless(bin, &tmp.join("chromium-profile"))
        .arg(format!("--window-size={},{}", WINDOW.0, WINDOW.1))
        .arg("--dump-dom")
        .arg(format!("file://{}", copy.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "chromium failed: {}", String::from_utf8_lossy(&o.stderr));
    let dom = String::from_utf8_lossy(&o.stdout);
    let text = dom
        .split("SCREEN\n")
        .nth(1)
        .and_then(|s| s.split("\nEND").next())
        .expect("the script ran");
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    assert_eq!(
        lines.first().map(String::as_str),
        Some(format!("WINDOW {}x{}", WINDOW.0, WINDOW.1).as_str()),
        "the window's size"
    );
    Some(lines)
}

/// Assert every check on both first screens, and the body's length.
pub fn judge(r: &Report, checks: &[Check]) {
    let mut screens = vec![("report.md's first 60 lines", &r.md)];
    if let Some(h) = &r.html {
        screens.push(("report.html at 1400×900", h));
    }
    let mut failed = Vec::new();
    for c in checks {
        for (name, lines) in &screens {
            if !(c.holds)(lines) {
                failed.push(format!("{name}: {}", c.what));
            }
        }
    }
    if std::env::var_os("PERFLAB_FIRST_SCREEN_SHOW").is_some() {
        for (name, lines) in &screens {
            eprintln!("--- {} {name}:\n{}", r.name, lines.join("\n"));
        }
    }
    if std::env::var_os("PERFLAB_FIRST_SCREEN_SOFT").is_some() && !failed.is_empty() {
        eprintln!("FAILED {}: {}", r.name, failed.join("; "));
        return;
    }
    let md_screen = r.md.join("\n");
    let html_screen = r.html.as_ref().map_or("(no chromium)".into(), |h| h.join("\n"));
    assert!(
        failed.is_empty(),
        // What is lacking comes last, where a log cut to its end still shows it.
        "{} ({}):\n--- report.md, first 60 lines:\n{md_screen}\n--- report.html, visible:\n{html_screen}\n--- {}: the first screen lacks:\n  {}",
        r.name,
        r.dir.display(),
        r.name,
        failed.join("\n  ")
    );
    assert!(
        r.body_lines <= BODY_LINES,
        "{}: report.md has {} lines before its appendix (at most {BODY_LINES})",
        r.name,
        r.body_lines
    );
    eprintln!("{}: first screen ok; {} lines before the appendix", r.name, r.body_lines);
}
