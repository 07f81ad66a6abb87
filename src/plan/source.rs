//! The plan's text and how to point into it: byte offsets → `file:line:col`, the span of a key, and
//! every string value (for `${name}` checks) with its span.

use std::ops::Range;
use toml::de::{DeTable, DeValue};

/// A plan's source text and the label used in messages (the path as the user gave it).
#[derive(Clone, Debug)]
pub struct Source {
    pub label: String,
    pub text: String,
}

impl Source {
    pub fn new(text: &str, label: &str) -> Source {
        Source {
            label: label.to_string(),
            text: text.to_string(),
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..floor_char_boundary(&self.text, offset)];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map(|l| l.chars().count()).unwrap_or(0) + 1;
        (line, col)
    }

    /// `file:line:col` of a span's start.
    pub fn at(&self, span: &Range<usize>) -> String {
        let (l, c) = self.line_col(span.start);
        format!("{}:{l}:{c}", self.label)
    }

    /// A bad-input error located at a span: `file:line:col: msg`, the message on one line with long
    /// values cut.
    pub fn error(&self, span: &Range<usize>, msg: impl AsRef<str>) -> anyhow::Error {
        crate::error::usage(format!("{}: {}", self.at(span), crate::util::text::humanize(msg.as_ref())))
    }

    /// The span of the `i`-th element of the array at `path` (the key's span when there is no such
    /// element).
    pub fn element_span(&self, path: &[&str], i: usize) -> Range<usize> {
        let Ok(root) = DeTable::parse(&self.text) else {
            return 0..0;
        };
        let mut table = root.get_ref();
        for (n, key) in path.iter().enumerate() {
            let Some((_, v)) = table.iter().find(|(k, _)| k.get_ref().as_ref() == *key) else {
                break;
            };
            match v.get_ref() {
                DeValue::Array(a) if n + 1 == path.len() => {
                    if let Some(e) = a.get(i) {
                        return e.span();
                    }
                }
                DeValue::Table(t) => table = t,
                _ => break,
            }
        }
        self.key_span(path)
    }

    /// The dotted path of the key whose value holds `offset` (`seed`, `variant.a.setup`), for
    /// messages about a value of the wrong type.
    pub fn key_at(&self, offset: usize) -> Option<String> {
        let root = DeTable::parse(&self.text).ok()?;
        let mut table = root.get_ref();
        let mut path: Vec<String> = Vec::new();
        'descend: loop {
            for (k, v) in table.iter() {
                if v.span().contains(&offset) || k.span().contains(&offset) {
                    path.push(k.get_ref().to_string());
                    match v.get_ref() {
                        DeValue::Table(t) if !k.span().contains(&offset) => {
                            table = t;
                            continue 'descend;
                        }
                        _ => break 'descend,
                    }
                }
                if let DeValue::Table(t) = v.get_ref() {
                    if holds(t, offset) {
                        path.push(k.get_ref().to_string());
                        table = t;
                        continue 'descend;
                    }
                }
            }
            break;
        }
        (!path.is_empty()).then(|| path.join("."))
    }

    /// The span of the key at `path` (e.g. `["target", "cpus"]`); when the last key is absent, the span
    /// of the deepest table that exists (its header or first key).
    pub fn key_span(&self, path: &[&str]) -> Range<usize> {
        let Ok(root) = DeTable::parse(&self.text) else {
            return 0..0;
        };
        let mut table = root.get_ref();
        let mut best = 0..0;
        for key in path {
            let Some((k, v)) = table.iter().find(|(k, _)| k.get_ref().as_ref() == *key) else {
                break;
            };
            best = k.span();
            match v.get_ref() {
                DeValue::Table(t) => table = t,
                _ => break,
            }
        }
        best
    }

    /// The dotted path of the innermost table (standard or inline) whose span holds `offset`, e.g.
    /// `phases` or `target.stop`; `None` at the top level. Tables inside arrays are not entered.
    pub fn section_at(&self, offset: usize) -> Option<String> {
        let Ok(root) = DeTable::parse(&self.text) else {
            return None;
        };
        let mut table = root.get_ref();
        let mut path: Vec<String> = Vec::new();
        'descend: loop {
            for (k, v) in table.iter() {
                if let DeValue::Table(t) = v.get_ref() {
                    let vs = v.span();
                    if k.span().contains(&offset) {
                        break 'descend;
                    }
                    if vs.contains(&offset) || holds(t, offset) {
                        path.push(k.get_ref().to_string());
                        table = t;
                        continue 'descend;
                    }
                }
            }
            break;
        }
        (!path.is_empty()).then(|| path.join("."))
    }

    /// Every string value under the key at `path`, with its span (arrays and inline tables included).
    pub fn strings_under(&self, path: &[&str]) -> Vec<(String, Range<usize>)> {
        let mut out = Vec::new();
        let Ok(root) = DeTable::parse(&self.text) else {
            return out;
        };
        let mut table = root.get_ref();
        for (i, key) in path.iter().enumerate() {
            let Some((_, v)) = table.iter().find(|(k, _)| k.get_ref().as_ref() == *key) else {
                return out;
            };
            if i + 1 == path.len() {
                collect_strings(v.get_ref(), v.span(), &mut out);
                return out;
            }
            match v.get_ref() {
                DeValue::Table(t) => table = t,
                _ => return out,
            }
        }
        out
    }
}

/// Whether a key or value anywhere inside `t` (nested tables included) spans `offset`.
fn holds(t: &DeTable<'_>, offset: usize) -> bool {
    t.iter().any(|(k, v)| {
        k.span().contains(&offset) || v.span().contains(&offset) || matches!(v.get_ref(), DeValue::Table(inner) if holds(inner, offset))
    })
}

fn collect_strings(v: &DeValue<'_>, span: Range<usize>, out: &mut Vec<(String, Range<usize>)>) {
    match v {
        DeValue::String(s) => out.push((s.to_string(), span)),
        DeValue::Array(a) => a.iter().for_each(|e| collect_strings(e.get_ref(), e.span(), out)),
        DeValue::Table(t) => t.iter().for_each(|(_, e)| collect_strings(e.get_ref(), e.span(), out)),
        _ => {}
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_to_lines_and_columns() {
        let s = Source::new("a = 1\n[workload]\nconections = 4\n", "plan.toml");
        assert_eq!(s.line_col(0), (1, 1));
        let at = s.text.find("conections").unwrap_or(0);
        assert_eq!(s.line_col(at), (3, 1));
        assert_eq!(s.at(&s.key_span(&["workload", "conections"])), "plan.toml:3:1");
        assert_eq!(s.line_col(s.key_span(&["workload"]).start), (2, 2));
    }

    #[test]
    fn sections_are_named_by_their_innermost_table() {
        let s = Source::new(
            "a = 1\n[phases]\nlod = 1\n[variant.x]\nsetpu = 2\n[target]\nstop = { sgnal = 3 }\n",
            "p",
        );
        let at = |k: &str| s.section_at(s.text.find(k).unwrap_or(0));
        assert_eq!(at("a ="), None);
        assert_eq!(at("lod").as_deref(), Some("phases"));
        assert_eq!(at("setpu").as_deref(), Some("variant.x"));
        assert_eq!(at("sgnal").as_deref(), Some("target.stop"));
        let key = |k: &str| s.key_at(s.text.find(k).unwrap_or(0));
        assert_eq!(key("1\n[phases]").as_deref(), Some("a"));
        assert_eq!(key("2\n[target]").as_deref(), Some("variant.x.setpu"));
        assert_eq!(key("3 }").as_deref(), Some("target.stop.sgnal"));
    }

    #[test]
    fn array_elements_have_their_own_spans() {
        let s = Source::new("thresholds = [\"a < 1\",\n  \"b > 2\"]\n", "p");
        assert_eq!(s.at(&s.element_span(&["thresholds"], 1)), "p:2:3");
        assert_eq!(s.at(&s.element_span(&["thresholds"], 5)), "p:1:1");
    }

    #[test]
    fn strings_are_found_with_their_spans() {
        let s = Source::new("[target]\ncommand = [\"serve\", \"${model}\"]\nenv = { A = \"${x}\" }\n", "p");
        let found = s.strings_under(&["target"]);
        let names: Vec<&str> = found.iter().map(|(v, _)| v.as_str()).collect();
        assert_eq!(names, ["serve", "${model}", "${x}"]);
        assert_eq!(s.line_col(found[2].1.start).0, 3);
    }
}
