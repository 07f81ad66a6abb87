//! `[profile]`: profiles of the system under test during every trial's load phase (docs/plan.md):
//! `on_cpu = true` (where the CPU time went), `off_cpu = true` (where the threads waited), of the
//! target's process tree (`scope = "target"`, the default), its cgroup or the whole machine.

use super::source::Source;
use toml::{Table, Value};

/// The keys `[profile]` accepts.
pub const KEYS: &[&str] = &["on_cpu", "off_cpu", "scope", "frequency", "call_graph"];

/// What to profile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProfileScope {
    /// The target's process tree.
    #[default]
    Target,
    /// The cgroup the target runs in.
    Cgroup,
    /// The whole machine the target runs on.
    System,
}

/// `[profile]` as validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileSpec {
    pub on_cpu: bool,
    pub off_cpu: bool,
    pub scope: ProfileScope,
    /// On-CPU sampling frequency (Hz).
    pub frequency_hz: u32,
    /// `fp` or `dwarf`.
    pub call_graph: String,
}

impl Default for ProfileSpec {
    fn default() -> Self {
        ProfileSpec {
            on_cpu: false,
            off_cpu: false,
            scope: ProfileScope::Target,
            frequency_hz: 49,
            call_graph: "fp".into(),
        }
    }
}

impl ProfileSpec {
    /// Whether any profile is asked for.
    pub fn any(&self) -> bool {
        self.on_cpu || self.off_cpu
    }
}

/// `[profile]` checked; errors at their place in the plan. `has_target`: the plan has a `[target]`
/// (the default scope profiles it).
pub fn profile(table: Option<&Table>, has_target: bool, src: &Source) -> anyhow::Result<Option<ProfileSpec>> {
    let Some(table) = table else { return Ok(None) };
    if let Some(k) = table.keys().find(|k| !KEYS.contains(&k.as_str())) {
        let hint = crate::util::suggest::nearest(k, KEYS)
            .map(|c| format!(" (did you mean `{c}`?)"))
            .unwrap_or_default();
        return Err(src.error(&src.key_span(&["profile", k]), format!("unknown key `{k}` in [profile]{hint}")));
    }
    let at = |k: &str| src.key_span(&["profile", k]);
    let flag = |k: &str| -> anyhow::Result<bool> {
        match table.get(k) {
            None => Ok(false),
            Some(Value::Boolean(b)) => Ok(*b),
            Some(_) => Err(src.error(&at(k), format!("[profile] {k} is true or false"))),
        }
    };
    let text = |k: &str, allowed: &[&str], default: &str| -> anyhow::Result<String> {
        match table.get(k) {
            None => Ok(default.to_string()),
            Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(s.clone()),
            Some(v) => {
                let shown = v.as_str().map_or_else(|| v.to_string(), |s| format!("\"{s}\""));
                let names: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
                Err(src.error(&at(k), format!("[profile] {k} = {shown}: use {}", names.join(" or "))))
            }
        }
    };
    let mut spec = ProfileSpec {
        on_cpu: flag("on_cpu")?,
        off_cpu: flag("off_cpu")?,
        ..ProfileSpec::default()
    };
    spec.scope = match text("scope", &["target", "cgroup", "system"], "target")?.as_str() {
        "cgroup" => ProfileScope::Cgroup,
        "system" => ProfileScope::System,
        _ => ProfileScope::Target,
    };
    spec.call_graph = text("call_graph", &["fp", "dwarf"], "fp")?;
    if let Some(v) = table.get("frequency") {
        match v.as_integer() {
            Some(f) if (1..=10_000).contains(&f) => spec.frequency_hz = f as u32,
            _ => {
                return Err(src.error(
                    &at("frequency"),
                    "[profile] frequency is a whole number of Hz from 1 to 10000 (default 49)",
                ));
            }
        }
    }
    if spec.any() && !has_target && spec.scope != ProfileScope::System {
        let k = if table.contains_key("scope") {
            "scope"
        } else if spec.on_cpu {
            "on_cpu"
        } else {
            "off_cpu"
        };
        return Err(src.error(
            &at(k),
            "[profile] profiles the target, and this plan has no [target]: add one, or profile the whole machine with scope = \"system\"",
        ));
    }
    Ok(Some(spec))
}

#[cfg(test)]
mod tests {
    fn parse(extra: &str) -> anyhow::Result<crate::plan::Plan> {
        let text = format!("name = \"p\"\n[target]\ncommand = \"sleep 60\"\n[workload]\ntype = \"cpu\"\n{extra}");
        crate::plan::parse_str(&text, "plan.toml")
    }

    #[test]
    fn defaults_and_values() {
        let p = parse("[profile]\non_cpu = true\n").expect("plan");
        let s = p.profile.expect("profile");
        assert!(s.on_cpu && !s.off_cpu);
        assert_eq!(
            (s.frequency_hz, s.call_graph.as_str(), s.scope),
            (49, "fp", super::ProfileScope::Target)
        );
        let p = parse("[profile]\noff_cpu = true\nscope = \"system\"\nfrequency = 99\ncall_graph = \"dwarf\"\n").expect("plan");
        let s = p.profile.expect("profile");
        assert_eq!(
            (s.frequency_hz, s.call_graph.as_str(), s.scope),
            (99, "dwarf", super::ProfileScope::System)
        );
        assert!(parse("").expect("plan").profile.is_none());
    }

    #[test]
    fn bad_input_is_one_line_at_its_place() {
        for (extra, line, says) in [
            (
                "[profile]\non_cpus = true\n",
                7,
                "unknown key `on_cpus` in [profile] (did you mean `on_cpu`?)",
            ),
            ("[profile]\non_cpu = \"yes\"\n", 7, "on_cpu is true or false"),
            ("[profile]\non_cpu = true\nfrequency = 0\n", 8, "from 1 to 10000"),
            (
                "[profile]\non_cpu = true\ncall_graph = \"lbr\"\n",
                8,
                "call_graph = \"lbr\": use \"fp\" or \"dwarf\"",
            ),
            (
                "[profile]\non_cpu = true\nscope = \"host\"\n",
                8,
                "use \"target\" or \"cgroup\" or \"system\"",
            ),
        ] {
            let e = parse(extra).expect_err(extra).to_string();
            assert!(e.starts_with(&format!("plan.toml:{line}:")) && e.contains(says), "{extra}: {e}");
        }
        let e = crate::plan::parse_str("name = \"p\"\n[workload]\ntype = \"cpu\"\n[profile]\non_cpu = true\n", "plan.toml")
            .expect_err("no target")
            .to_string();
        assert!(e.starts_with("plan.toml:5:") && e.contains("scope = \"system\""), "{e}");
    }
}
