//! The monitor's memory figures against the tools a sysadmin checks them with, at the same instant:
//! `free -b` (procps-ng) and `/proc/meminfo` itself. "Memory used" is what `free` prints as used
//! (procps-ng ≥ 4: total − available); the components (anonymous, page cache, slab, free) and sar's
//! kbmemused are their own metrics, each one line of /proc/meminfo or sar's formula over them.
//!
//! The machine is shared: memory moves while the figures are read. /proc/meminfo is read just before
//! the sampler and again just after `free`, and each comparison allows 1 % or 8 MB (whichever is
//! more) plus what the figures it involves moved between those two reads.

use perflab::monitor::system::{figures, Root, Selection, Snapshot};
use perflab::monitor::Group;
use std::collections::BTreeMap;
use std::process::Command;

/// /proc/meminfo in MiB.
fn meminfo() -> BTreeMap<String, f64> {
    let text = std::fs::read_to_string("/proc/meminfo").expect("/proc/meminfo");
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let kb: f64 = v.split_whitespace().next()?.parse().ok()?;
            Some((k.to_string(), kb / 1024.0))
        })
        .collect()
}

/// `free -b`'s Mem line, in MiB: total, used, free, shared, buff/cache, available.
fn free_b() -> Option<[f64; 6]> {
    let out = Command::new("free").arg("-b").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("Mem:"))?;
    let v: Vec<f64> = line.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    (v.len() == 6).then(|| [0, 1, 2, 3, 4, 5].map(|i| v[i] / 1_048_576.0))
}

/// procps-ng's major version, from `free --version` ("free from procps-ng 4.0.2").
fn procps_major() -> Option<u32> {
    let out = Command::new("free").arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text.split_whitespace().last()?;
    version.split('.').next()?.parse().ok()
}

/// The sampler's figures of this instant (memory only).
fn sampled() -> BTreeMap<String, f64> {
    let mem = |g: Group| g == Group::Mem;
    let root = Root::live();
    let snap = Snapshot::read(&root, &mem, &Selection::default());
    let mut out = Vec::new();
    figures(&snap, &snap, 1.0, &Selection::default(), &mut out);
    out.into_iter().collect()
}

#[track_caller]
fn close(what: &str, got: f64, want: f64, moved: f64) {
    let allowed = (0.01 * want.abs()).max(8.0) + moved;
    assert!(
        (got - want).abs() <= allowed,
        "{what}: perflab {got:.1} MiB, the reference {want:.1} MiB (allowed ± {allowed:.1}: 1 % or 8 MiB, plus {moved:.1} the machine moved meanwhile)"
    );
}

#[test]
fn memory_used_is_what_free_prints_and_the_components_are_meminfos_lines() {
    let Some(major) = procps_major() else {
        crate::common::skip_unless_required("`free` (procps) is not installed");
        return;
    };
    let before = meminfo();
    let ours = sampled();
    let free = free_b().expect("free -b prints a Mem: line of 6 numbers");
    let after = meminfo();
    // How much each /proc/meminfo line moved while the three were read.
    let moved = |keys: &[&str]| -> f64 { keys.iter().map(|k| (after[*k] - before[*k]).abs()).sum() };
    let get = |name: &str| *ours.get(name).unwrap_or_else(|| panic!("the monitor gives no {name}"));
    let [total, used, free_col, _shared, buff_cache, available] = free;

    close("mem_total_mb vs free's total", get("mem_total_mb"), total, 0.0);
    // procps-ng 4 prints total − available as used; earlier ones total − free − buff/cache.
    let used_ref = if major >= 4 { used } else { total - available };
    close("mem_used_mb vs free's used", get("mem_used_mb"), used_ref, moved(&["MemAvailable"]));
    close("mem_free_mb vs free's free", get("mem_free_mb"), free_col, moved(&["MemFree"]));
    close(
        "mem_available_mb vs free's available",
        get("mem_available_mb"),
        available,
        moved(&["MemAvailable"]),
    );
    let bc = get("mem_buffers_mb") + get("mem_cached_mb");
    close(
        "mem_buffers_mb + mem_cached_mb vs free's buff/cache",
        bc,
        buff_cache,
        moved(&["Buffers", "Cached", "SReclaimable"]),
    );
    let pct = 100.0 * get("mem_used_mb") / get("mem_total_mb");
    assert!((get("mem_used_pct") - pct).abs() < 1e-9, "mem_used_pct is used / total");

    for (name, line) in [
        ("mem_anon_mb", "AnonPages"),
        ("mem_page_cache_mb", "Cached"),
        ("mem_slab_mb", "Slab"),
    ] {
        close(&format!("{name} vs {line}"), get(name), after[line], moved(&[line]));
    }
    let m = &after;
    let sar = m["MemTotal"] - m["MemFree"] - m["Buffers"] - m["Cached"] - m["Slab"];
    close(
        "mem_used_sar_mb vs sar's kbmemused",
        get("mem_used_sar_mb"),
        sar,
        moved(&["MemFree", "Buffers", "Cached", "Slab"]),
    );
    eprintln!(
        "free (procps-ng {major}): used {used:.0} MiB, free {free_col:.0}, buff/cache {buff_cache:.0}, available {available:.0}; \
         perflab: used {:.0}, anon {:.0}, page cache {:.0}, slab {:.0}, sar's used {:.0}",
        get("mem_used_mb"),
        get("mem_anon_mb"),
        get("mem_page_cache_mb"),
        get("mem_slab_mb"),
        get("mem_used_sar_mb")
    );
}
