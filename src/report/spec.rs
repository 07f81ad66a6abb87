//! What the plan's `[report]` section asks of the report: the parameter whose values are the
//! variants (`compare`, against `baseline`), the x axis (`x`, `x_scale`), the summary's primary
//! metrics (`metrics`) and the system table's metrics (`system`). The plan checked these keys
//! before the run; here they are read back from the plan the store kept.

use serde::{Deserialize, Serialize};

/// The `[report]` section; every key optional (absent: the report chooses, as documented in
/// docs/plan.md).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct ReportSpec {
    #[serde(default)]
    pub compare: Option<String>,
    /// The value of `compare` the others are compared against (as written in a label).
    #[serde(default, deserialize_with = "value_text")]
    pub baseline: Option<String>,
    #[serde(default)]
    pub x: Option<String>,
    #[serde(default)]
    pub x_scale: Option<String>,
    #[serde(default)]
    pub metrics: Vec<String>,
    #[serde(default)]
    pub system: Vec<String>,
}

fn value_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v: Option<toml::Value> = Option::deserialize(d)?;
    Ok(v.map(|v| match v {
        toml::Value::String(s) => s,
        other => other.to_string(),
    }))
}

impl ReportSpec {
    /// The `[report]` table of a plan's text; the default when it has none or cannot be read.
    pub fn from_plan(source: &str) -> ReportSpec {
        let Ok(table) = source.parse::<toml::Table>() else {
            return ReportSpec::default();
        };
        match table.get("report") {
            Some(r) => r.clone().try_into().unwrap_or_default(),
            None => ReportSpec::default(),
        }
    }
}

/// What a plan declares about its comparison besides `[report]`, read from its text:
/// `[variant.<value>]` tables, and the keys they set (a matrix parameter such as `model` among
/// them follows the compared value, so points are paired without it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Declared {
    pub variant_tables: bool,
    /// Every key a variant sets besides its hooks, in name order.
    pub variant_sets: Vec<String>,
}

/// The hooks' own keys in `[variant.<value>]` (plan/variant_settings.rs).
const HOOK_KEYS: [&str; 3] = ["setup", "teardown", "skip_unless"];

impl Declared {
    pub fn from_plan(source: &str) -> Declared {
        let Ok(table) = source.parse::<toml::Table>() else {
            return Declared::default();
        };
        let Some(toml::Value::Table(variants)) = table.get("variant") else {
            return Declared::default();
        };
        let mut sets: Vec<String> = variants
            .values()
            .filter_map(toml::Value::as_table)
            .flat_map(|t| t.keys())
            .filter(|k| !HOOK_KEYS.contains(&k.as_str()))
            .cloned()
            .collect();
        sets.sort();
        sets.dedup();
        Declared {
            variant_tables: true,
            variant_sets: sets,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_report_table_and_defaults_without_it() {
        let s = ReportSpec::from_plan("name = \"a\"\n[report]\ncompare = \"model\"\nbaseline = 5\nx = \"c\"\nx_scale = \"log\"\n");
        assert_eq!(s.compare.as_deref(), Some("model"));
        assert_eq!(s.baseline.as_deref(), Some("5"));
        assert_eq!(s.x_scale.as_deref(), Some("log"));
        assert_eq!(ReportSpec::from_plan("name = \"a\"\n"), ReportSpec::default());
    }

    #[test]
    fn reads_what_the_variants_set() {
        let d = Declared::from_plan(
            "[matrix]\nvariant = [\"before\", \"after\"]\nmodel = [\"pool\"]\n[variant.after]\nmodel = \"event-loop\"\nsetup = \"true\"\n[variant.before]\nteardown = \"true\"\n",
        );
        assert!(d.variant_tables);
        assert_eq!(d.variant_sets, ["model"]);
        assert_eq!(Declared::from_plan("[matrix]\nvariant = [1]\n"), Declared::default());
    }
}
