//! The workload registry: the one list of workload kinds a plan's `[workload] type` can name.
//!
//! Each kind ([`WorkloadKind`]) declares its keys (name, type, default, one line of doc: the plan's
//! key check, did-you-mean hints and the key tables of docs/plan.md come from them) and builds its
//! [`Workload`] from a plan table, with `file:line:col` errors. The workload it builds checks what it
//! needs before the run ([`Workload::preflight`]), describes itself for `perflab run --dry-run`
//! ([`Workload::describe`]) and names its headline figures ([`Workload::primary`]); its metrics carry
//! their [`MetricKind`](crate::workload::MetricKind).
//!
//! A built-in kind declares its settings once, with [`settings!`]: one struct that a plan's table
//! decodes into (serde), that `perflab load <kind>` parses its options into (clap), and whose
//! fields' docs, types and defaults are the kind's [`Key`]s ([`Settings::KEYS`]). Its
//! [`WorkloadKind::load`] gives `perflab load` its subcommand: the command line has no list of its own.
//!
//! Adding a kind: write its module `src/workload/<name>/` with a `pub struct Kind;` implementing
//! [`WorkloadKind`], declare it in `src/workload/mod.rs` and add `<name>` to the `kinds!` line
//! there, the list. Nothing else names the kinds: plan validation, the runner, the dry run,
//! `perflab load` and the docs test all ask this list.

use crate::util::suggest::{backticked, did_you_mean, nearest};
use crate::workload::Workload;

/// One key of a kind's `[workload]` table, as docs/plan.md lists it.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    pub name: &'static str,
    /// The TOML type(s) accepted, in the user's words (`integer`, `string or list of strings`).
    pub ty: &'static str,
    /// The default, or `required`.
    pub default: &'static str,
    /// What it does: one line, or a doc comment's lines (read through [`Key::doc_line`]).
    pub doc: &'static str,
}

impl Key {
    /// The doc on one line (a doc comment's lines joined).
    pub fn doc_line(&self) -> String {
        self.doc
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A built-in kind's settings: one struct, decoded from a plan's `[workload]` table (serde) and
/// parsed from `perflab load <kind>`'s options (clap), declared with [`settings!`], which makes its
/// keys from the fields.
pub trait Settings: clap::Args + clap::FromArgMatches + serde::de::DeserializeOwned {
    /// Every field, as a key of the `[workload]` table: its name, type, default and doc.
    const KEYS: &'static [Key];
}

/// Declares a kind's settings struct once: each field's doc comment is its key's doc (and its
/// option's help), `#[key("type", "default")]` says what docs/plan.md's table says of it, and the
/// other attributes are serde's and clap's. The struct derives `clap::Args` and
/// `serde::Deserialize` and implements [`Settings`].
macro_rules! settings {
    (
        $(#[$smeta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[doc = $doc:literal])*
                #[key($ty:literal, $default:literal)]
                $(#[$fmeta:meta])*
                $fvis:vis $field:ident : $fty:ty
            ),* $(,)?
        }
    ) => {
        #[derive(clap::Args, serde::Deserialize)]
        $(#[$smeta])*
        $vis struct $name {
            $(
                $(#[doc = $doc])*
                $(#[$fmeta])*
                $fvis $field: $fty,
            )*
        }

        impl $crate::workload::registry::Settings for $name {
            const KEYS: &'static [$crate::workload::registry::Key] = &[$(
                $crate::workload::registry::Key {
                    name: stringify!($field),
                    ty: $ty,
                    default: $default,
                    doc: concat!($($doc, "\n",)*),
                },
            )*];
        }
    };
}
pub(crate) use settings;

/// `perflab load <kind>`: a kind's subcommand, its options and how it runs.
pub struct LoadCommand {
    /// Its line in `perflab load --help`.
    pub about: &'static str,
    /// Adds its options (the kind's settings and `perflab load`'s common flags) to a command.
    pub augment: fn(clap::Command) -> clap::Command,
    /// Runs it from the parsed options; the exit code.
    pub run: fn(&clap::ArgMatches) -> anyhow::Result<i32>,
}

/// The options of a `perflab load` subcommand, as parsed: the kind's settings `S` (with any option
/// of its own) and the common flags ([`LoadFlags`](crate::workload::driver::live::LoadFlags)).
pub trait LoadRun: clap::Args + clap::FromArgMatches {
    /// Run the load; the exit code.
    fn run(self, flags: crate::workload::driver::live::LoadFlags) -> anyhow::Result<i32>;
}

impl LoadCommand {
    /// The subcommand of options `A` and the common flags, flattened once here.
    pub fn of<A: LoadRun>(about: &'static str) -> LoadCommand {
        use crate::workload::driver::live::LoadFlags;
        use clap::{Args, FromArgMatches};
        LoadCommand {
            about,
            augment: |cmd| LoadFlags::augment_args(A::augment_args(cmd)),
            run: |m| {
                let bad = |e: clap::Error| crate::error::usage(e.to_string().trim().to_string());
                let a = A::from_arg_matches(m).map_err(bad)?;
                a.run(LoadFlags::from_arg_matches(m).map_err(bad)?)
            },
        }
    }
}

/// Declares the list of every kind (in `workload/mod.rs`): a kind `name` is `name::Kind`, the
/// `Kind` of the module `workload::name` (declared beside the list, as any module, so that rustfmt
/// and the tests see it); a kind built by a file of this registry (`http`, `exec`: their engines'
/// modules are large and strictly layered) is written `name in registry::name::Kind`.
macro_rules! kinds {
    ($($kind:ident $(in $path:path)?),* $(,)?) => {
        /// Every workload kind, in the order docs and messages list them.
        pub static KINDS: &[&dyn $crate::workload::registry::WorkloadKind] =
            &[$(&$crate::workload::registry::kinds!(@kind $kind $(in $path)?),)*];
    };
    (@kind $kind:ident) => {
        $kind::Kind
    };
    (@kind $kind:ident in $path:path) => {
        $path
    };
}
pub(crate) use kinds;

pub mod exec;
pub mod http;
pub use super::KINDS;

/// Where a key of the `[workload]` table is in the plan source, for error messages.
pub trait Locator {
    /// `file:line:col` of `key` inside the workload table (or of the table itself).
    fn at(&self, key: Option<&str>) -> String;
}

/// One kind of workload (`type = "http"`, `type = "exec"`, ...).
pub trait WorkloadKind: Sync {
    /// The value of `type` that selects it.
    fn name(&self) -> &'static str;
    /// One line for the docs: what it runs.
    fn summary(&self) -> &'static str;
    /// Every key its table accepts besides `type`.
    fn keys(&self) -> &'static [Key];
    /// Build it from one trial's substituted table (without `type`; every key is one of
    /// [`keys`](Self::keys)). Errors name the place: [`located`] and [`decode`] help.
    fn build(&self, table: toml::Table, loc: &dyn Locator) -> anyhow::Result<Box<dyn Workload>>;
    /// Its `perflab load <name>` subcommand, if it runs alone from the command line.
    fn load(&self) -> Option<LoadCommand> {
        None
    }
}

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

/// The dry run's line for a built workload: what runs and its headline figures.
pub fn describe(w: &dyn Workload) -> String {
    format!("{} · primary: {}", w.describe(), w.primary().describe())
}

/// Decode a kind's config struct from its table; serde's errors become `file:line:col` lines at the
/// key concerned, saying what the key takes in the words of the kind's declared [`Key`]s.
pub fn decode<T: serde::de::DeserializeOwned>(table: toml::Table, keys: &[Key], loc: &dyn Locator) -> anyhow::Result<T> {
    let err = match T::deserialize(toml::Value::Table(table.clone())) {
        Ok(t) => return Ok(t),
        Err(e) => e.message().trim().to_string(),
    };
    if let Some(k) = backticked(&err).filter(|_| err.starts_with("unknown field")) {
        return Err(located(
            loc,
            Some(&k),
            &format!("unknown key `{k}` in [workload]{}", did_you_mean(&err)),
        ));
    }
    if let Some(k) = backticked(&err).filter(|_| err.starts_with("missing field")) {
        let ty = keys
            .iter()
            .find(|key| key.name == k)
            .map(|key| format!(" ({})", key.ty))
            .unwrap_or_default();
        return Err(located(loc, None, &format!("[workload] needs `{k}`{ty}")));
    }
    // serde does not say which key a wrong value is for: the first prefix of the table that fails
    // (for another reason than a missing key) ends with it.
    let mut prefix = toml::Table::new();
    for (k, v) in &table {
        prefix.insert(k.clone(), v.clone());
        let Err(e) = T::deserialize(toml::Value::Table(prefix.clone())) else {
            continue;
        };
        if e.message().starts_with("missing field") {
            continue;
        }
        let expected = match keys.iter().find(|key| key.name == k) {
            Some(key) => format!("expected {}", key.ty),
            None => crate::util::text::humanize(e.message()),
        };
        // Inside a list or a table, serde's own "found ..." names the element at fault.
        let human = crate::util::text::humanize(e.message());
        let found = match v {
            toml::Value::Array(_) | toml::Value::Table(_) => match human.split_once(", found ") {
                Some((_, f)) if f != crate::util::text::describe(v) => format!("{} holding {f}", crate::util::text::describe(v)),
                _ => crate::util::text::describe(v),
            },
            _ => crate::util::text::describe(v),
        };
        return Err(located(loc, Some(k), &format!("`{k}`: {expected}, found {found}")));
    }
    Err(located(loc, None, &format!("[workload]: {}", crate::util::text::humanize(&err))))
}

/// A usage error (exit code 2) at `key` of the workload table, the message on one line with long
/// values cut.
pub fn located(loc: &dyn Locator, key: Option<&str>, msg: &str) -> anyhow::Error {
    crate::error::usage(format!("{}: {}", loc.at(key), crate::util::text::humanize(msg)))
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

/// Build a built-in workload from its table: decode its settings `C`, construct the workload with
/// `new`, and place a construction error at the key its message starts with (the built-ins'
/// messages name their key first), or at the table.
pub fn build_builtin<C, W>(
    table: toml::Table,
    loc: &dyn Locator,
    new: impl FnOnce(&C) -> anyhow::Result<W>,
) -> anyhow::Result<Box<dyn crate::workload::Workload>>
where
    C: Settings,
    W: crate::workload::Workload + 'static,
{
    build_builtin_keys(table, C::KEYS, loc, new)
}

/// [`build_builtin`] for a config whose keys are declared apart from it.
pub fn build_builtin_keys<C, W>(
    table: toml::Table,
    keys: &[Key],
    loc: &dyn Locator,
    new: impl FnOnce(&C) -> anyhow::Result<W>,
) -> anyhow::Result<Box<dyn crate::workload::Workload>>
where
    C: serde::de::DeserializeOwned,
    W: crate::workload::Workload + 'static,
{
    let cfg: C = decode(table, keys, loc)?;
    let w = new(&cfg).map_err(|e| {
        let msg = format!("{e:#}");
        let key = keys.iter().map(|k| k.name).find(|k| msg.starts_with(k));
        located(loc, key, &msg)
    })?;
    Ok(Box::new(w))
}

/// For a kind's unit test: the keys it declares are exactly the fields its config decodes.
#[cfg(test)]
pub(crate) fn assert_declared_keys<T: serde::de::DeserializeOwned>(keys: &[Key]) {
    let mut declared: Vec<String> = keys.iter().map(|k| k.name.to_string()).collect();
    declared.sort();
    assert_eq!(declared, serde_fields::<T>());
}

/// For a kind's unit test: every key of its settings is an option of `perflab load <kind>` (named
/// as the key, `-` for `_`) whose help is the key's doc, save the keys named in `not_options`.
#[cfg(test)]
pub(crate) fn assert_keys_are_options<S: Settings>(not_options: &[&str]) {
    let cmd = S::augment_args(clap::Command::new("t"));
    for key in S::KEYS.iter().filter(|k| !not_options.contains(&k.name)) {
        let arg = cmd
            .get_arguments()
            .find(|a| a.get_id() == key.name)
            .unwrap_or_else(|| panic!("no option for `{}`", key.name));
        let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
        assert!(!help.is_empty(), "`{}` has no help", key.name);
    }
    assert_declared_keys::<S>(S::KEYS);
}

/// The fields a config struct accepts, as serde lists them for an unknown one (for the tests that
/// a kind's declared keys are exactly what its config decodes).
#[cfg(test)]
pub(crate) fn serde_fields<T: serde::de::DeserializeOwned>() -> Vec<String> {
    let mut t = toml::Table::new();
    t.insert("zz_not_a_key".into(), toml::Value::Integer(1));
    let msg = match T::deserialize(toml::Value::Table(t)) {
        Err(e) => e.message().to_string(),
        Ok(_) => panic!("an unknown key was accepted"),
    };
    let (_, expected) = msg.split_once("expected").unwrap_or_else(|| panic!("{msg}"));
    let mut fields: Vec<String> = expected.split('`').skip(1).step_by(2).map(str::to_string).collect();
    fields.sort();
    fields
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

    #[test]
    fn an_unknown_type_gets_a_hint() {
        assert_eq!(unknown_type("htp"), "unknown workload type \"htp\" (did you mean \"http\"?)");
        let all = quoted_list(&names());
        assert_eq!(unknown_type("zzzzzzzz"), format!("unknown workload type \"zzzzzzzz\" (use {all})"));
        assert_eq!(quoted_list(&["a", "b", "c"]), "\"a\", \"b\" or \"c\"");
    }
}
