//! Settings a plan changes that cannot have an effect on this machine, said as notes (the dry run
//! prints them, and a run keeps them for its report): a variant setting `vm.swappiness` where there
//! is no swap. Without swap the kernel never reclaims anonymous memory, so how it weighs anonymous
//! against file pages (what swappiness tunes) has nothing to choose between.

use super::VariantHooks;
use std::collections::BTreeMap;

/// The notes for `variants` on a machine whose swap totals `swap_kb` (None: unknown, no note).
pub fn notes(variants: &BTreeMap<String, VariantHooks>, swap_kb: Option<u64>) -> Vec<String> {
    if swap_kb != Some(0) {
        return Vec::new();
    }
    // `sysctl -w vm.swappiness=10`, `echo 10 > /proc/sys/vm/swappiness`, `… | tee /proc/sys/vm/swappiness`.
    let Ok(sets) = regex::Regex::new(r"vm[./]swappiness\s*=|>\s*/proc/sys/vm/swappiness|tee\s+(-a\s+)?/proc/sys/vm/swappiness") else {
        return Vec::new();
    };
    let setting: Vec<&str> = variants
        .iter()
        .filter(|(_, h)| h.setup.iter().any(|c| sets.is_match(c)))
        .map(|(name, _)| name.as_str())
        .collect();
    if setting.is_empty() {
        return Vec::new();
    }
    let which = match setting.as_slice() {
        [one] => format!("variant {one} sets"),
        many => format!("variants {} set", many.join(", ")),
    };
    vec![format!(
        "{which} vm.swappiness, but this machine has no swap (SwapTotal 0 kB in /proc/meminfo): nothing can be swapped out, so the setting cannot have an effect here"
    )]
}

/// This machine's swap in kB (`SwapTotal` of /proc/meminfo), None when it cannot be read.
pub fn swap_total_kb() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("SwapTotal:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hooks(setup: &str) -> VariantHooks {
        VariantHooks {
            setup: vec![setup.to_string()],
            teardown: Vec::new(),
            skip_unless: Vec::new(),
        }
    }

    #[test]
    fn only_a_swappiness_setting_on_a_machine_without_swap_is_said() {
        let mut v = BTreeMap::new();
        v.insert("after".to_string(), hooks("sysctl -q -w vm.swappiness=10"));
        v.insert("before".to_string(), hooks("echo 60 > /proc/sys/vm/swappiness"));
        v.insert("other".to_string(), hooks("sysctl -w net.core.somaxconn=4096"));
        v.insert("reads".to_string(), hooks("cat /proc/sys/vm/swappiness"));
        let n = notes(&v, Some(0));
        assert_eq!(n.len(), 1);
        assert!(
            n[0].starts_with("variants after, before set vm.swappiness, but this machine has no swap"),
            "{}",
            n[0]
        );
        assert!(notes(&v, Some(2048)).is_empty(), "with swap it can have an effect");
        assert!(notes(&v, None).is_empty(), "unknown: nothing said");
        v.remove("before");
        assert!(notes(&v, Some(0))[0].starts_with("variant after sets vm.swappiness"));
    }
}
