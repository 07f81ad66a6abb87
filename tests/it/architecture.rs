//! The house rules of `src/`, checked on the source itself: no file over 600 lines, no function over
//! 150, and no import cycle: neither between the pipeline's top-level modules nor between the modules
//! inside one. A child may use the items its parent's `mod.rs` declares (a module's shared types),
//! except in `report`, `workload::http` and `workload::driver`, which keep a strict one-way layering: there a child that
//! uses its parent while the parent uses it counts as a cycle. `model` is the bottom layer: it uses
//! nothing of the crate, and `analysis`, `store` and `report` never use `workload`.
//! docs/architecture.md explains the layering these tests keep.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 150;

fn sources() -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).expect("read src") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&root, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&root).expect("under src").to_string_lossy().replace('\\', "/");
            (rel, std::fs::read_to_string(&p).expect("read source"))
        })
        .collect()
}

/// The code with comments, string and char literals blanked (newlines kept), so that braces and
/// paths are only the code's own.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if c == b'r' && matches!(b.get(i + 1), Some(b'"') | Some(b'#')) && (i == 0 || !is_ident(b[i - 1])) {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
            out.extend(std::iter::repeat_n(b' ', j + 1 - i));
            i = j + 1;
            while i < b.len() && !b[i..].starts_with(&close) {
                blank(&mut out, b[i]);
                i += 1;
            }
            out.extend(std::iter::repeat_n(b' ', close.len().min(b.len() - i)));
            i += close.len();
        } else if c == b'"' {
            out.push(b' ');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                let step = if b[i] == b'\\' { 2 } else { 1 };
                for k in 0..step {
                    if let Some(&x) = b.get(i + k) {
                        blank(&mut out, x);
                    }
                }
                i += step;
            }
            out.push(b' ');
            i += 1;
        } else if c == b'\'' && is_char_literal(&b[i..]) {
            let len = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..].iter().position(|&x| x == b'\'').map_or(1, |p| p + 3)
            } else {
                std::str::from_utf8(&b[i + 1..])
                    .ok()
                    .and_then(|s| s.chars().next())
                    .map_or(1, |ch| ch.len_utf8() + 2)
            };
            out.extend(std::iter::repeat_n(b' ', len));
            i += len;
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// `'x'`, `'\n'`, `'\u{1F600}'`, but not a lifetime `'a`.
fn is_char_literal(b: &[u8]) -> bool {
    if b.get(1) == Some(&b'\\') {
        return true;
    }
    let Ok(s) = std::str::from_utf8(&b[1..b.len().min(6)]) else {
        return false;
    };
    let mut chars = s.chars();
    chars.next().is_some_and(|_| chars.next() == Some('\''))
}

#[test]
fn no_source_file_is_over_600_lines() {
    let long: Vec<String> = sources()
        .iter()
        .map(|(f, s)| (f, s.lines().count()))
        .filter(|(_, n)| *n > MAX_FILE_LINES)
        .map(|(f, n)| format!("src/{f}: {n} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_LINES} lines (split them):\n{}",
        long.join("\n")
    );
}

/// (file, function, first line, lines) of every function with a body.
fn functions() -> Vec<(String, String, usize, usize)> {
    let mut out = Vec::new();
    for (file, src) in sources() {
        let code = code_only(&src);
        let lines: Vec<&str> = code.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(pos) = find_fn(line) else { continue };
            let name: String = line[pos + 3..]
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            // Find the body's opening brace (or a `;`: a declaration), then its match.
            let (mut depth, mut started, mut end) = (0i32, false, None);
            'scan: for (j, l) in lines.iter().enumerate().skip(i) {
                let from = if j == i { pos } else { 0 };
                for ch in l[from..].chars() {
                    match ch {
                        ';' if !started && depth == 0 => break 'scan,
                        '{' => {
                            depth += 1;
                            started = true;
                        }
                        '}' => {
                            depth -= 1;
                            if started && depth == 0 {
                                end = Some(j);
                                break 'scan;
                            }
                        }
                        _ => {}
                    }
                }
            }
            if let Some(end) = end {
                out.push((file.clone(), name, i + 1, end - i + 1));
            }
        }
    }
    out
}

/// The byte offset of a `fn` keyword that starts a function item on this line.
fn find_fn(line: &str) -> Option<usize> {
    let t = line.trim_start();
    let mut rest = t;
    for q in ["pub(crate) ", "pub(super) ", "pub ", "const ", "async ", "unsafe ", "extern \"C\" "] {
        rest = rest.strip_prefix(q).unwrap_or(rest);
    }
    rest.starts_with("fn ").then(|| line.len() - rest.len())
}

#[test]
fn no_function_is_over_150_lines() {
    let all = functions();
    assert!(all.len() > 500, "the scanner found only {} functions: it is broken", all.len());
    let long: Vec<String> = all
        .iter()
        .filter(|f| f.3 > MAX_FN_LINES)
        .map(|(file, name, line, n)| format!("src/{file}:{line}: fn {name} is {n} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines (split them):\n{}",
        long.join("\n")
    );
}

/// The module path of a source file: `report/export/md.rs` → `report::export::md`.
fn module_of(file: &str) -> String {
    let m = file.trim_end_matches(".rs").trim_end_matches("/mod").replace('/', "::");
    if m == "lib" || m == "main" {
        String::new()
    } else {
        m
    }
}

/// Which modules each module uses: every `crate::a::b` / `super::a` / `self::a` path, and a child's
/// name used bare, resolved to the deepest module it names.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let files = sources();
    let modules: BTreeSet<String> = files.iter().map(|(f, _)| module_of(f)).collect();
    let deepest = |segs: &[&str]| -> Option<String> {
        let mut best = None;
        for n in 1..=segs.len() {
            let cand = segs[..n].join("::");
            if modules.contains(&cand) {
                best = Some(cand);
            } else {
                break;
            }
        }
        best
    };
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, src) in &files {
        let me = module_of(file);
        let is_mod_file = file.ends_with("mod.rs") || file == "lib.rs" || file == "main.rs";
        // `super` of a mod.rs is its directory's parent; of a plain file, its directory.
        let parent: Vec<&str> = {
            let segs: Vec<&str> = me.split("::").filter(|s| !s.is_empty()).collect();
            segs[..segs.len().saturating_sub(1)].to_vec()
        };
        let code = code_only(src);
        let edges = graph.entry(me.clone()).or_default();
        for path in paths_in(&expand_groups(&code)) {
            let segs: Vec<&str> = path.split("::").collect();
            let absolute: Vec<&str> = match segs[0] {
                "crate" => segs[1..].to_vec(),
                "super" => {
                    let mut base = parent.clone();
                    let mut rest = &segs[1..];
                    while rest.first() == Some(&"super") {
                        base.pop();
                        rest = &rest[1..];
                    }
                    base.extend_from_slice(rest);
                    base
                }
                "self" => me.split("::").filter(|s| !s.is_empty()).chain(segs[1..].iter().copied()).collect(),
                first => {
                    // A child module named bare (`export::md::Markdown` inside report/mod.rs).
                    let child = if me.is_empty() {
                        first.to_string()
                    } else {
                        format!("{me}::{first}")
                    };
                    if !is_mod_file || !modules.contains(&child) {
                        continue;
                    }
                    me.split("::").filter(|s| !s.is_empty()).chain(segs.iter().copied()).collect()
                }
            };
            if let Some(target) = deepest(&absolute) {
                if target != me {
                    edges.insert(target);
                }
            }
        }
    }
    graph
}

/// `use a::{b, c::{d, e}}` → `a::b, a::c::d, a::c::e` (innermost groups first).
fn expand_groups(code: &str) -> String {
    let mut text = code.to_string();
    loop {
        let Some(open) = find_innermost_group(&text) else { return text };
        let close = open + text[open..].find('}').expect("a group closes");
        let prefix_start = text[..open - 2]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .map_or(0, |p| p + 1);
        let prefix = text[prefix_start..open - 2].to_string();
        let items: Vec<String> = text[open + 1..close]
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| if s == "self" { prefix.clone() } else { format!("{prefix}::{s}") })
            .collect();
        text.replace_range(prefix_start..=close, &items.join(", "));
    }
}

/// The `{` of a `path::{...}` group that holds no other group.
fn find_innermost_group(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut best = None;
    for (i, _) in text.match_indices("::{") {
        let open = i + 2;
        let close = text[open + 1..].find('}').map(|p| p + open + 1)?;
        if !b[open + 1..close].contains(&b'{') {
            best = Some(open);
            break;
        }
    }
    best
}

/// Paths with at least two segments: `crate::a::b`, `super::x`, `name::Item`.
fn paths_in(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = code.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if is_ident(b[i]) && (i == 0 || !(is_ident(b[i - 1]) || b[i - 1] == b':')) {
            let start = i;
            while i < b.len()
                && (is_ident(b[i]) || (b[i] == b':' && b.get(i + 1) == Some(&b':') && b.get(i + 2).is_some_and(|&c| is_ident(c))))
            {
                i += if b[i] == b':' { 2 } else { 1 };
            }
            let p = &code[start..i];
            if p.contains("::") {
                out.push(p.to_string());
            }
        } else {
            i += 1;
        }
    }
    out
}

/// One cycle of the graph, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            match state.get(m.as_str()).copied().unwrap_or(0) {
                1 => {
                    let from = stack.iter().position(|s| s == m).expect("on the stack");
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(m.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(m, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_top_level_modules_form_a_pipeline_without_cycles() {
    let graph = module_graph();
    let top = |m: &str| m.split("::").next().unwrap_or("").to_string();
    let mut layers: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, tos) in &graph {
        for to in tos {
            if top(from) != top(to) && !top(from).is_empty() {
                layers.entry(top(from)).or_default().insert(top(to));
            }
        }
    }
    assert!(
        layers.get("report").is_some_and(|d| d.contains("analysis")),
        "the scanner missed report → analysis: {layers:?}"
    );
    if let Some(c) = find_cycle(&layers) {
        panic!("top-level modules import each other in a circle: {}", c.join(" → "));
    }
}

/// `model` (metrics, histograms, series, primaries, phases, trial failures, host identity) is the
/// bottom layer: it uses no stage of the crate, and the stages that read results (`analysis`,
/// `store`, `report`) take the model from there, never from `workload`.
#[test]
fn the_result_model_is_the_bottom_layer() {
    let graph = module_graph();
    let top = |m: &str| m.split("::").next().unwrap_or("").to_string();
    assert!(
        graph.get("store::read").is_some_and(|d| d.iter().any(|m| top(m) == "model")),
        "the scanner missed store::read → model: {graph:?}"
    );
    let mut wrong = Vec::new();
    for (from, tos) in &graph {
        for to in tos.iter().filter(|to| top(to) != top(from)) {
            let reader = ["analysis", "store", "report"].contains(&top(from).as_str());
            if (reader && top(to) == "workload") || top(from) == "model" {
                wrong.push(format!("{from} → {to}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports that break the model's layering (analysis, store and report take the result model \
         from `model`; `model` uses nothing of the crate):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let graph = module_graph();
    assert!(
        graph.get("report::assemble").is_some_and(|d| d.contains("report::loaded")),
        "the scanner missed an edge: {graph:?}"
    );
    // Within each top-level module, one node per file. Outside the strict modules, a child's use of
    // an ancestor (its parent's declarations) is not an edge.
    const STRICT: [&str; 3] = ["report", "workload::http", "workload::driver"];
    let strict = |m: &str| STRICT.iter().any(|s| m == *s || m.starts_with(&format!("{s}::")));
    let mut by_top: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (from, tos) in &graph {
        let t = from.split("::").next().unwrap_or("").to_string();
        let inner = by_top.entry(t.clone()).or_default();
        let e = inner.entry(from.clone()).or_default();
        let ancestor = |to: &str| from.starts_with(&format!("{to}::"));
        e.extend(
            tos.iter()
                .filter(|to| to.split("::").next() == Some(t.as_str()))
                .filter(|to| strict(from) || !ancestor(to))
                .cloned(),
        );
    }
    let mut cycles = Vec::new();
    for (top, g) in &by_top {
        if let Some(c) = find_cycle(g) {
            cycles.push(format!("{top}: {}", c.join(" → ")));
        }
    }
    assert!(cycles.is_empty(), "modules that import each other back:\n{}", cycles.join("\n"));
}

#[test]
fn the_scanner_reads_code_not_strings_or_comments() {
    let src = "fn a() { let s = \"}{\"; let c = '{'; // }\n let r = r#\"}\"#; 'x: loop { break 'x; } }\n";
    let code = code_only(src);
    assert_eq!(code.matches('{').count(), code.matches('}').count(), "{code}");
    assert_eq!(
        expand_groups("use super::{a, b::{c, d}};"),
        "use super::a, super::b::c, super::b::d;"
    );
    assert_eq!(
        paths_in("let x = crate::plan::Plan::new(); y::z"),
        vec!["crate::plan::Plan::new", "y::z"]
    );
}
