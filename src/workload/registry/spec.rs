//! What a workload kind declares to the registry: its keys ([`Key`], from its [`Settings`]
//! declared with `settings!`), how it is built ([`WorkloadKind`], with `file:line:col` errors
//! from [`decode`] and [`located`]) and its `perflab load` subcommand ([`LoadCommand`]). The kinds
//! use this file; the registry's list (`registry/mod.rs`) uses the kinds.

use crate::util::suggest::{backticked, did_you_mean};
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
/// parsed from `perflab load <kind>`'s options (clap), declared with `settings!`, which makes its
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

        impl $crate::workload::registry::spec::Settings for $name {
            const KEYS: &'static [$crate::workload::registry::spec::Key] = &[$(
                $crate::workload::registry::spec::Key {
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
    /// `--live`: the parsed options as a plan's `[workload]` table (without `type`), checked as
    /// [`run`](Self::run) checks them, and the common flags.
    pub plan: fn(&clap::ArgMatches) -> anyhow::Result<(toml::Table, crate::workload::driver::live::LoadFlags)>,
}

/// The options of a `perflab load` subcommand, as parsed: the kind's settings `S` (with any option
/// of its own) and the common flags ([`LoadFlags`](crate::workload::driver::live::LoadFlags)).
pub trait LoadRun: clap::Args + clap::FromArgMatches {
    /// Run the load; the exit code.
    fn run(self, flags: crate::workload::driver::live::LoadFlags) -> anyhow::Result<i32>;
    /// The settings as a plan's `[workload]` table (without `type`), checked as [`run`](Self::run)
    /// checks them (bad input: a usage error in the command's words), for `--live`, which runs
    /// them as a one-trial plan. An option of the command alone that a plan cannot keep is refused.
    fn workload(self) -> anyhow::Result<toml::Table>;
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
                let a = A::from_arg_matches(m).map_err(bad)?;
                a.run(LoadFlags::from_arg_matches(m).map_err(bad)?)
            },
            plan: |m| {
                let flags = LoadFlags::from_arg_matches(m).map_err(bad)?;
                Ok((A::from_arg_matches(m).map_err(bad)?.workload()?, flags))
            },
        }
    }
}

/// A parse error of the options, as bad input.
fn bad(e: clap::Error) -> anyhow::Error {
    crate::error::usage(e.to_string().trim().to_string())
}

/// A kind's settings as a plan's `[workload]` table (without `type`): the options given, and the
/// defaults the options have.
pub fn as_table<S: serde::Serialize>(settings: &S) -> anyhow::Result<toml::Table> {
    Ok(toml::Table::try_from(settings)?)
}

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
