//! The workload registry: the one list of workload kinds a plan's `[workload] type` can name.
//!
//! Each kind ([`WorkloadKind`]) declares its keys (name, type, default, one line of doc: the plan's
//! key check, did-you-mean hints and the key tables of docs/plan.md come from them) and builds its
//! [`Workload`] from a plan table, with `file:line:col` errors. The workload it builds checks what it
//! needs before the run ([`Workload::preflight`]), says the facts its keys do not for `perflab run
//! --dry-run` ([`Workload::facts`], after which [`describe`] lists the keys the plan set) and names
//! its headline figures ([`Workload::primary`]); its metrics carry
//! their [`MetricKind`](crate::workload::MetricKind).
//!
//! A built-in kind declares its settings once, with `settings!`: one struct that a plan's table
//! decodes into (serde), that `perflab load <kind>` parses its options into (clap), and whose
//! fields' docs, types and defaults are the kind's [`Key`]s ([`Settings::KEYS`]). Its
//! [`WorkloadKind::load`] gives `perflab load` its subcommand: the command line has no list of its own.
//!
//! Adding a kind: write its module `src/workload/<name>/` (declared in `src/workload/mod.rs` as
//! any module) with a `pub struct Kind;` implementing [`WorkloadKind`] (what a kind declares is in
//! [`spec`], which the kinds use; this file uses the kinds), then add it to [`KINDS`] below. Nothing else names the kinds: plan validation, the runner, the dry run,
//! `perflab load` and the docs test all ask this list.

pub mod exec;
pub mod http;
pub mod spec;

use crate::util::suggest::nearest;
use crate::workload::Workload;
pub use spec::{build_builtin, decode, located, Key, LoadCommand, LoadRun, Locator, Settings, WorkloadKind};

/// Every workload kind, in the order docs and messages list them: the one list. A kind with a
/// module of its own under `workload/` has its `Kind` there (`spec.rs` is what it implements);
/// `http` and `exec` have theirs in this directory (their engines' settings are declared apart).
pub static KINDS: &[&dyn WorkloadKind] = &[
    &http::Kind,
    &exec::Kind,
    &crate::workload::cpu::Kind,
    &crate::workload::mem::Kind,
    &crate::workload::disk::Kind,
    &crate::workload::net::Kind,
    &crate::workload::oltp::Kind,
];

/// The kind called `name`.
pub fn by_name(name: &str) -> Option<&'static dyn WorkloadKind> {
    KINDS.iter().copied().find(|k| k.name() == name)
}

/// Every kind's name, in list order.
pub fn names() -> Vec<&'static str> {
    KINDS.iter().map(|k| k.name()).collect()
}

/// `unknown workload type "htp" (did you mean "http"?)`, or the known names when none is near.
pub fn unknown_type(bad: &str) -> String {
    let names = names();
    let hint = match nearest(bad, &names) {
        Some(n) => format!("did you mean \"{n}\"?"),
        None => format!("use {}", quoted_list(&names)),
    };
    format!("unknown workload type \"{bad}\" ({hint})")
}

/// `"http" or "exec"` (for messages).
pub fn quoted_list(names: &[&str]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    match q.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => q.join(""),
    }
}

/// Build one trial's workload from its substituted table: the kind named by `kind`, its keys
/// checked against the declared ones, built, then its preflight checks run.
pub fn build(kind: &str, table: &toml::Table, loc: &dyn Locator) -> anyhow::Result<Box<dyn Workload>> {
    let Some(k) = by_name(kind) else {
        return Err(located(loc, Some("type"), &unknown_type(kind)));
    };
    let mut table = table.clone();
    table.remove("type");
    let declared: Vec<&str> = k.keys().iter().map(|key| key.name).collect();
    if let Some(bad) = table.keys().find(|t| !declared.contains(&t.as_str())) {
        let hint = nearest(bad, &declared)
            .map(|c| format!(" (did you mean `{c}`?)"))
            .unwrap_or_default();
        return Err(located(loc, Some(bad), &format!("unknown key `{bad}` in [workload]{hint}")));
    }
    let w = k.build(table, loc)?;
    w.preflight().map_err(|u| located(loc, u.key, &format!("{:#}", u.error)))?;
    Ok(w)
}

/// An exec workload run on another machine by `runner` (`[workload] host = "server"`).
pub fn build_exec_on(
    table: &toml::Table,
    loc: &dyn Locator,
    runner: Box<dyn crate::workload::exec::Runner>,
) -> anyhow::Result<Box<dyn Workload>> {
    let mut table = table.clone();
    table.remove("type");
    exec::build_on(table, loc, runner)
}

/// The dry run's line for a workload of kind `kind` built from `table`, the same for every kind:
/// `kind: ` its one line of derived facts ([`Workload::facts`], what the keys do not say), then each
/// key the table sets as `name = value` in the plan's words and in the kind's declaration order
/// (`host` last), then its headline figures. Values pass `redactor` before they are cut, so that no
/// part of a secret shows.
pub fn describe(kind: &str, table: &toml::Table, w: &dyn Workload, redactor: &crate::util::redact::Redactor) -> String {
    let declared = by_name(kind).map_or(&[][..], |k| k.keys());
    let names = declared.iter().map(|k| k.name).chain(["host", "from"]);
    let set: Vec<String> = names
        .filter_map(|name| Some(format!("{name} = {}", plan_words(table.get(name)?, redactor))))
        .collect();
    let mut parts: Vec<String> = w.facts().into_iter().collect();
    if !set.is_empty() {
        parts.push(set.join(", "));
    }
    parts.push(format!("primary: {}", w.primary().describe()));
    format!("{kind}: {}", parts.join(" · "))
}

/// Longer values are cut in the dry run's line.
const VALUE_CHARS: usize = 120;

/// A value as a plan writes it (`"hash"`, `50`, `["-c", "1"]`), secrets redacted, on one line.
fn plan_words(v: &toml::Value, redactor: &crate::util::redact::Redactor) -> String {
    let written = match v {
        toml::Value::Table(t) => {
            let inner: Vec<String> = t.iter().map(|(k, v)| format!("{k} = {}", plan_words(v, redactor))).collect();
            format!("{{ {} }}", inner.join(", "))
        }
        other => other.to_string(),
    };
    crate::util::text::clip_to(&redactor.apply(&written), VALUE_CHARS)
}

/// The Markdown key table of a kind, exactly as docs/plan.md carries it (a test checks that).
pub fn docs_table(kind: &dyn WorkloadKind) -> String {
    let mut s = format!(
        "### `type = \"{}\"`\n\n{}\n\n| key | type | default | meaning |\n|---|---|---|---|\n",
        kind.name(),
        kind.summary()
    );
    for k in kind.keys() {
        s.push_str(&format!("| `{}` | {} | {} | {} |\n", k.name, k.ty, k.default, k.doc_line()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_key_is_documented_in_one_line() {
        let mut seen = Vec::new();
        for k in KINDS {
            assert!(!seen.contains(&k.name()), "{} listed twice", k.name());
            seen.push(k.name());
            assert!(!k.summary().contains('\n'));
            for key in k.keys() {
                assert!(key.name != "type", "`type` is the registry's");
                let doc = key.doc_line();
                for text in [key.ty, key.default, doc.as_str()] {
                    assert!(
                        !text.is_empty() && !text.contains('\n') && !text.contains('|'),
                        "{}.{}",
                        k.name(),
                        key.name
                    );
                }
            }
        }
    }

    struct Here;
    impl Locator for Here {
        fn at(&self, _: Option<&str>) -> String {
            "plan.toml".into()
        }
    }

    #[test]
    fn the_dry_run_line_says_the_facts_then_the_set_keys_in_declaration_order_redacted() {
        let table: toml::Table = toml::from_str("method = \"hash\"\nload = 50\nworkers = 1").expect("toml");
        let w = build("cpu", &table, &Here).expect("built");
        let line = describe("cpu", &table, w.as_ref(), &crate::util::redact::Redactor::new(["hash".to_string()]));
        let facts = w.facts().expect("cpu has facts");
        assert!(
            line.starts_with(&format!(
                "cpu: {facts} · workers = 1, load = 50, method = \"[redacted]\" · primary: "
            )),
            "{line}"
        );
        // A long value is cut (after its opening quote and `echo `: 6 characters).
        let long: toml::Table = toml::from_str(&format!("command = \"echo {}\"", "x".repeat(500))).expect("toml");
        let w = build("exec", &long, &Here).expect("built");
        let line = describe("exec", &long, w.as_ref(), &crate::util::redact::Redactor::default());
        assert!(
            line.contains(&format!("command = \"echo {}… · primary", "x".repeat(VALUE_CHARS - 6))),
            "{line}"
        );
        assert!(!line.contains(&"x".repeat(VALUE_CHARS)), "{line}");
    }

    #[test]
    fn an_unknown_type_gets_a_hint() {
        assert_eq!(unknown_type("htp"), "unknown workload type \"htp\" (did you mean \"http\"?)");
        let all = quoted_list(&names());
        assert_eq!(unknown_type("zzzzzzzz"), format!("unknown workload type \"zzzzzzzz\" (use {all})"));
        assert_eq!(quoted_list(&["a", "b", "c"]), "\"a\", \"b\" or \"c\"");
    }
}
