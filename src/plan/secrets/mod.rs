//! The plan's secrets, found on the parsed plan (not on its text), so that no value reaching a
//! credential is written anywhere: the plan copy a run keeps, the store, reports, terminal lines
//! and error messages.
//!
//! A secret is:
//! - the value of a key named `Authorization`, `Proxy-Authorization`, `Cookie` or `Set-Cookie` (any
//!   case, however the key is written: quoted, escaped) in a table of `[target]` or `[workload]`
//!   (`headers`, `env`), and of a name listed in that section's `secrets`;
//! - in a command (`[target] command`, `[workload] command` and `warmup_command`, variant hooks):
//!   the value of a `-H`/`--header` argument carrying such a header, and of the credential options
//!   of ab and curl (see `command`);
//! - the password of a database URL, `[workload] db` (the oltp workload's), and of an http URL,
//!   `[workload] url` (sent as Basic authorization);
//! - the values of a matrix parameter used inside one of those (`Authorization = "${auth}"`), and
//!   every point's value after substitution.
//!
//! Matrix parameters that feed a secret are shown as `[redacted]` in labels and parameters
//! (`[redacted-1]`, `[redacted-2]`, ... by their place in the matrix list when there are several,
//! so the points stay apart).

mod command;
mod copy;

use super::source::Source;
use super::values::{self, references, Params};
use super::{Matrix, VariantHooks};
use crate::util::redact::{Redactor, REDACTED};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use toml::de::{DeTable, DeValue};
use toml::{Spanned, Table, Value};

/// Header names whose values are credentials (compared without case).
pub const SENSITIVE_HEADERS: &[&str] = &["authorization", "proxy-authorization", "cookie", "set-cookie"];

/// What a plan keeps secret, and the copy of the plan without it. Its `Debug` output shows no secret.
#[derive(Clone, Default)]
pub struct Secrets {
    redacted_source: String,
    had_secrets: bool,
    /// Matrix parameters whose values feed a secret.
    params: Vec<String>,
    marked_target: Vec<String>,
    marked_workload: Vec<String>,
    /// Every secret text met so far (as written, after substitution, and their credential parts).
    texts: BTreeSet<String>,
    /// Replacements in the plan's text: (span of a value, the string it becomes).
    edits: Vec<(Range<usize>, String)>,
    redactor: Redactor,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secrets")
            .field("had_secrets", &self.had_secrets)
            .field("params", &self.params)
            .field("redactor", &self.redactor)
            .finish_non_exhaustive()
    }
}

impl Secrets {
    /// The plan's text with every secret replaced by `[redacted]`: valid TOML, comments and layout
    /// kept. This is the copy a run keeps (`plan.toml` in the run directory and the store).
    pub fn redacted_source(&self) -> &str {
        &self.redacted_source
    }

    /// Whether anything was taken out of the plan's copy (a run from that copy would not send the
    /// same requests).
    pub fn had_secrets(&self) -> bool {
        self.had_secrets
    }

    /// Replaces the plan's secrets in any text (errors, outputs, notes, terminal lines).
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Whether the matrix parameter `name` feeds a secret.
    pub fn feeds_secret(&self, name: &str) -> bool {
        self.params.iter().any(|p| p == name)
    }

    /// The parameters as labels and the store show them: a value that feeds a secret becomes its
    /// placeholder (`[redacted]`, or `[redacted-N]` for the N-th of several values).
    pub(super) fn shown(&self, params: &Params, m: &Matrix) -> Params {
        params
            .iter()
            .map(|(k, v)| {
                if !self.feeds_secret(k) {
                    return (k.clone(), v.clone());
                }
                let all = m.params.iter().find(|(p, _)| p == k).map_or(&[][..], |(_, vals)| vals.as_slice());
                let shown = match all.iter().position(|x| x == v) {
                    Some(i) => placeholder(i, all.len()),
                    None => REDACTED.to_string(),
                };
                (k.clone(), Value::String(shown))
            })
            .collect()
    }

    /// Add the secrets of one point: its `[target]` and `[workload]` after substitution.
    pub(super) fn add_point(&mut self, target: Option<&Table>, workload: Option<&Table>) {
        let mut hits = Vec::new();
        if let Some(t) = target {
            scan_section(&value_table(t), TARGET_COMMANDS, &self.marked_target, &mut hits);
        }
        if let Some(w) = workload {
            scan_section(&value_table(w), WORKLOAD_COMMANDS, &self.marked_workload, &mut hits);
        }
        for p in hits.iter().flat_map(|h| &h.parts) {
            self.texts.extend(credential_parts(p));
        }
    }

    /// Add the secrets of the variant hooks (after `${variant}` substitution).
    pub(super) fn add_hooks(&mut self, hooks: &BTreeMap<String, VariantHooks>) {
        let all = hooks.values().flat_map(|h| h.setup.iter().chain(&h.teardown).chain(&h.skip_unless));
        for (_, parts) in all.filter_map(|c| command::shell(c, &[])) {
            parts.iter().for_each(|p| self.texts.extend(credential_parts(p)));
        }
    }

    /// An error with the secrets met so far taken out of its message.
    pub(super) fn scrub_error(&self, e: anyhow::Error) -> anyhow::Error {
        Redactor::new(self.texts.iter().cloned()).error(e)
    }

    /// Build the redactor and the plan's redacted copy once every point has been added.
    pub(super) fn finish(&mut self, src: &Source) {
        self.redactor = Redactor::new(self.texts.iter().cloned());
        self.redacted_source = copy::redact(&src.text, &self.edits, &self.redactor);
        self.had_secrets = self.redacted_source != src.text;
    }
}

/// Find the secrets written in the plan (literal values, and the matrix parameters feeding secrets
/// with their values), and check each section's `secrets` list.
pub(super) fn scan(src: &Source) -> anyhow::Result<Secrets> {
    let Ok(doc) = DeTable::parse(&src.text) else {
        return Ok(Secrets::default());
    };
    let root = de_table(doc.get_ref());
    let mut s = Secrets::default();
    let mut hits = Vec::new();
    if let Some(t) = table(&root, "target") {
        s.marked_target = marked(t, src, "target", &["env"])?;
        scan_section(t, TARGET_COMMANDS, &s.marked_target, &mut hits);
    }
    if let Some(w) = table(&root, "workload") {
        s.marked_workload = marked(w, src, "workload", &["env", "headers"])?;
        scan_section(w, WORKLOAD_COMMANDS, &s.marked_workload, &mut hits);
    }
    for (_, hooks) in table(&root, "variant").into_iter().flatten() {
        if let Kind::Table(h) = &hooks.kind {
            scan_section(h, HOOK_COMMANDS, &[], &mut hits);
        }
    }
    for h in hits {
        for p in &h.parts {
            let refs = references(p);
            if refs.is_empty() {
                s.texts.extend(credential_parts(p));
            }
            for r in refs {
                if !s.params.contains(&r) {
                    s.params.push(r);
                }
            }
        }
        s.edits.push((h.span, h.redacted));
    }
    if let Some(m) = table(&root, "matrix") {
        redact_matrix(m, &mut s);
    }
    s.redactor = Redactor::new(s.texts.iter().cloned());
    Ok(s)
}

/// The values of the matrix parameters that feed secrets, in the lists and in `exclude`.
fn redact_matrix(m: &[(String, Node)], s: &mut Secrets) {
    let mut lists: Vec<(&str, Vec<String>)> = Vec::new();
    for (k, v) in m.iter().filter(|(k, _)| s.params.contains(k)) {
        let values: Vec<&Node> = match &v.kind {
            Kind::Array(a) => a.iter().collect(),
            _ => vec![v],
        };
        for (i, n) in values.iter().enumerate() {
            s.texts.extend(credential_parts(&n.text()));
            s.edits.push((n.span.clone(), placeholder(i, values.len())));
        }
        lists.push((k, values.iter().map(|n| n.text()).collect()));
    }
    let entries = match m.iter().find(|(k, _)| k == "exclude").map(|(_, n)| &n.kind) {
        Some(Kind::Array(a)) => a.as_slice(),
        _ => &[],
    };
    for entry in entries {
        let Kind::Table(t) = &entry.kind else { continue };
        for (k, v) in t {
            if let Some((_, shown)) = lists.iter().find(|(p, _)| p == k) {
                let at = shown.iter().position(|x| *x == v.text());
                s.edits
                    .push((v.span.clone(), at.map_or(REDACTED.to_string(), |i| placeholder(i, shown.len()))));
            }
        }
    }
}

fn placeholder(index: usize, of: usize) -> String {
    if of == 1 {
        REDACTED.to_string()
    } else {
        format!("[redacted-{}]", index + 1)
    }
}

/// The names a section's `secrets` lists: a list of strings, each a key of one of the `tables`.
fn marked(section: &[(String, Node)], src: &Source, name: &str, tables: &[&str]) -> anyhow::Result<Vec<String>> {
    let Some((_, list)) = section.iter().find(|(k, _)| k == "secrets") else {
        return Ok(Vec::new());
    };
    let places = tables.iter().map(|t| format!("[{name}] {t}")).collect::<Vec<_>>().join(" or ");
    let Kind::Array(items) = &list.kind else {
        return Err(src.error(
            &list.span,
            format!("[{name}] secrets: expected a list of names from {places}, such as [\"PGPASSWORD\"]"),
        ));
    };
    let known: Vec<&str> = tables
        .iter()
        .filter_map(|t| table(section, t))
        .flat_map(|t| t.iter().map(|(k, _)| k.as_str()))
        .collect();
    let mut out = Vec::new();
    for item in items {
        let Kind::Str(n) = &item.kind else {
            return Err(src.error(&item.span, format!("[{name}] secrets: expected a name from {places}")));
        };
        if !known.iter().any(|k| k.eq_ignore_ascii_case(n)) {
            let hint = crate::util::suggest::nearest(n, &known)
                .map(|c| format!(" (did you mean `{c}`?)"))
                .unwrap_or_default();
            return Err(src.error(&item.span, format!("[{name}] secrets: `{n}` is not in {places}{hint}")));
        }
        out.push(n.clone());
    }
    Ok(out)
}

/// Whether a header or variable name holds a credential: a sensitive header, or a name the plan
/// marks secret (neither compared with case).
pub(super) fn is_sensitive(name: &str, marked: &[String]) -> bool {
    SENSITIVE_HEADERS.iter().any(|h| h.eq_ignore_ascii_case(name)) || marked.iter().any(|m| m.eq_ignore_ascii_case(name))
}

/// A secret's replacement: `[redacted]`, except a plain `${name}` reference (not secret itself:
/// its matrix values are redacted instead), which is kept so the copy still reads as the plan.
pub(super) fn keep_or_redact(secret: &str) -> String {
    let refs = references(secret);
    let mut rest = secret.to_string();
    for r in &refs {
        rest = rest.replacen(&format!("${{{r}}}"), "", 1);
    }
    if !refs.is_empty() && !rest.contains(|c: char| c.is_alphanumeric()) && !rest.contains("${") {
        secret.to_string()
    } else {
        REDACTED.to_string()
    }
}

/// A secret and its credential parts, for searching free text: `Bearer T` → `T`, a cookie's
/// `a=V; b=W` → `V`, `W`, `user:pass` → `pass`.
fn credential_parts(secret: &str) -> Vec<String> {
    let s = secret.trim();
    let mut out = vec![s.to_string()];
    if let Some((_, rest)) = s.split_once(char::is_whitespace) {
        out.push(rest.trim().to_string());
    }
    for pair in s.split(';') {
        if let Some((_, v)) = pair.split_once('=') {
            out.push(v.trim().to_string());
        }
    }
    if let Some((_, pass)) = s.split_once(':') {
        out.push(pass.trim().to_string());
    }
    out.retain(|p| !p.is_empty());
    out
}

/// How a section's command keys are written: an argv list or a shell string, or shell strings only.
#[derive(Clone, Copy)]
enum Form {
    Argv,
    ShellList,
}

const TARGET_COMMANDS: &[(&str, Form)] = &[("command", Form::Argv)];
const WORKLOAD_COMMANDS: &[(&str, Form)] = &[("command", Form::Argv), ("warmup_command", Form::Argv)];
const HOOK_COMMANDS: &[(&str, Form)] = &[
    ("setup", Form::ShellList),
    ("teardown", Form::ShellList),
    ("skip_unless", Form::ShellList),
];

/// A string of the plan that holds a secret: its span, what it becomes, the secrets as they read.
struct Hit {
    span: Range<usize>,
    redacted: String,
    parts: Vec<String>,
}

fn scan_section(t: &[(String, Node)], commands: &[(&str, Form)], marked: &[String], out: &mut Vec<Hit>) {
    for (k, v) in t {
        if let Some((_, form)) = commands.iter().find(|(c, _)| c == k) {
            scan_command(v, *form, marked, out);
        } else if k == "db" || k == "url" {
            db_url(v, out);
        } else if let Kind::Table(inner) = &v.kind {
            scan_nested(inner, marked, out);
        }
    }
}

fn scan_nested(t: &[(String, Node)], marked: &[String], out: &mut Vec<Hit>) {
    for (k, v) in t {
        if is_sensitive(k, marked) {
            whole(v, out);
        } else if let Kind::Table(inner) = &v.kind {
            scan_nested(inner, marked, out);
        }
    }
}

/// The password of a database URL (`[workload] db = "postgres://user:password@host/db"`, the oltp
/// workload's) or of an http URL (`[workload] url`) is a secret; the URL is kept without it.
fn db_url(v: &Node, out: &mut Vec<Hit>) {
    if let Kind::Str(s) = &v.kind {
        if let Some(password) = crate::util::redact::url_password(s) {
            out.push(Hit {
                span: v.span.clone(),
                redacted: crate::util::redact::redact_url(s),
                parts: vec![password],
            });
        }
    }
}

/// Every value under a sensitive key is a secret.
fn whole(v: &Node, out: &mut Vec<Hit>) {
    match &v.kind {
        Kind::Str(s) => out.push(Hit {
            span: v.span.clone(),
            redacted: keep_or_redact(s),
            parts: vec![s.clone()],
        }),
        Kind::Other(s) => out.push(Hit {
            span: v.span.clone(),
            redacted: REDACTED.to_string(),
            parts: vec![s.clone()],
        }),
        Kind::Array(a) => a.iter().for_each(|n| whole(n, out)),
        Kind::Table(t) => t.iter().for_each(|(_, n)| whole(n, out)),
    }
}

fn scan_command(v: &Node, form: Form, marked: &[String], out: &mut Vec<Hit>) {
    match (&v.kind, form) {
        (Kind::Str(s), _) => {
            if let Some((redacted, parts)) = command::shell(s, marked) {
                out.push(Hit {
                    span: v.span.clone(),
                    redacted,
                    parts,
                });
            }
        }
        (Kind::Array(items), Form::Argv) => {
            let words: Vec<String> = items.iter().map(Node::text).collect();
            for (n, found) in items.iter().zip(command::argv(&words, marked)) {
                if let Some((redacted, parts)) = found {
                    out.push(Hit {
                        span: n.span.clone(),
                        redacted,
                        parts,
                    });
                }
            }
        }
        (Kind::Array(items), Form::ShellList) => items.iter().for_each(|n| scan_command(n, form, marked, out)),
        _ => {}
    }
}

/// A plan value with its span (0..0 for a value made by substitution): the one shape both the
/// parsed text and a substituted table are scanned in.
struct Node {
    span: Range<usize>,
    kind: Kind,
}

enum Kind {
    Str(String),
    /// A number, boolean or date, as text.
    Other(String),
    Array(Vec<Node>),
    Table(Vec<(String, Node)>),
}

impl Node {
    fn de(v: &Spanned<DeValue<'_>>) -> Node {
        let kind = match v.get_ref() {
            DeValue::String(s) => Kind::Str(s.to_string()),
            DeValue::Integer(i) => Kind::Other(i.to_string()),
            DeValue::Float(f) => Kind::Other(f.to_string()),
            DeValue::Boolean(b) => Kind::Other(b.to_string()),
            DeValue::Datetime(d) => Kind::Other(d.to_string()),
            DeValue::Array(a) => Kind::Array(a.iter().map(Node::de).collect()),
            DeValue::Table(t) => Kind::Table(de_table(t)),
        };
        Node { span: v.span(), kind }
    }

    fn value(v: &Value) -> Node {
        let kind = match v {
            Value::String(s) => Kind::Str(s.clone()),
            Value::Array(a) => Kind::Array(a.iter().map(Node::value).collect()),
            Value::Table(t) => Kind::Table(value_table(t)),
            other => Kind::Other(values::display(other)),
        };
        Node { span: 0..0, kind }
    }

    /// A string or scalar as text; empty for an array or table.
    fn text(&self) -> String {
        match &self.kind {
            Kind::Str(s) | Kind::Other(s) => s.clone(),
            _ => String::new(),
        }
    }
}

fn de_table(t: &DeTable<'_>) -> Vec<(String, Node)> {
    t.iter().map(|(k, v)| (k.get_ref().to_string(), Node::de(v))).collect()
}

fn value_table(t: &Table) -> Vec<(String, Node)> {
    t.iter().map(|(k, v)| (k.clone(), Node::value(v))).collect()
}

fn table<'a>(t: &'a [(String, Node)], key: &str) -> Option<&'a [(String, Node)]> {
    t.iter().find(|(k, _)| k == key).and_then(|(_, v)| match &v.kind {
        Kind::Table(inner) => Some(inner.as_slice()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_alone_are_kept_and_anything_else_is_redacted() {
        assert_eq!(keep_or_redact("${auth}"), "${auth}");
        assert_eq!(keep_or_redact("${user}:${pass}"), "${user}:${pass}");
        assert_eq!(keep_or_redact("Bearer ${tok}"), REDACTED);
        assert_eq!(keep_or_redact("sid=abc"), REDACTED);
    }

    #[test]
    fn credential_parts_of_common_forms() {
        assert_eq!(credential_parts("Bearer abc"), ["Bearer abc", "abc"]);
        assert_eq!(credential_parts("a=1; sid=xyz"), ["a=1; sid=xyz", "sid=xyz", "1", "xyz"]);
        assert_eq!(credential_parts("user:pw"), ["user:pw", "pw"]);
    }
}
