//! The copy of a plan a run keeps: the plan's own text, with each value that holds a secret
//! replaced at its span by a TOML string, and the secrets met elsewhere (in another string, in a
//! comment, or again later in the very string an edit replaces: `curl -u admin:PASS ...; echo
//! PASS`) taken out too. Comments and layout stay; the result is valid TOML when the plan was.

use crate::util::redact::Redactor;
use std::ops::Range;
use toml::de::{DeTable, DeValue};
use toml_parser::lexer::TokenKind;

/// `text` with `edits` (value spans → new string values) applied, and every string value (the
/// edited ones included: a secret may appear again beside the word an edit redacted) and comment
/// passed through `redactor`.
pub fn redact(text: &str, edits: &[(Range<usize>, String)], redactor: &Redactor) -> String {
    let mut all: Vec<(Range<usize>, String)> = edits.iter().map(|(r, s)| (r.clone(), toml_string(&redactor.apply(s)))).collect();
    let edited = |all: &[(Range<usize>, String)], span: &Range<usize>| all.iter().any(|(r, _)| r.start < span.end && span.start < r.end);
    if let Ok(doc) = DeTable::parse(text) {
        let mut strings = Vec::new();
        collect_strings(doc.get_ref(), &mut strings);
        for (span, s) in strings {
            let clean = redactor.apply(&s);
            if clean != s && !edited(&all, &span) {
                all.push((span, toml_string(&clean)));
            }
        }
    }
    for token in toml_parser::Source::new(text).lex() {
        if token.kind() != TokenKind::Comment {
            continue;
        }
        let span = token.span().start()..token.span().end();
        let Some(comment) = text.get(span.clone()) else { continue };
        let clean = redactor.apply(comment);
        if clean != comment && !edited(&all, &span) {
            all.push((span, clean));
        }
    }
    all.sort_by_key(|(r, _)| (r.start, r.end));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (r, s) in all {
        if r.start < at || r.end > text.len() {
            continue;
        }
        out.push_str(&text[at..r.start]);
        out.push_str(&s);
        at = r.end;
    }
    out.push_str(&text[at..]);
    out
}

/// A string as a TOML value (quoted and escaped).
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn collect_strings(t: &DeTable<'_>, out: &mut Vec<(Range<usize>, String)>) {
    for (_, v) in t.iter() {
        collect_value(v, out);
    }
}

fn collect_value(v: &toml::Spanned<DeValue<'_>>, out: &mut Vec<(Range<usize>, String)>) {
    match v.get_ref() {
        DeValue::String(s) => out.push((v.span(), s.to_string())),
        DeValue::Array(a) => a.iter().for_each(|e| collect_value(e, out)),
        DeValue::Table(t) => collect_strings(t, out),
        _ => {}
    }
}
