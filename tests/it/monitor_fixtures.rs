//! The sampler's formulas on captured /proc snapshots with hand-computed answers (sysstat's formulas),
//! a counter that goes backward, and a snapshot captured from a real machine.

use perflab::monitor::system::{figures, Root, Selection, Snapshot};
use perflab::monitor::Group;
use std::path::PathBuf;

fn fixture(case: &str, t: &str) -> Snapshot {
    let root = Root(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/proc")
            .join(case)
            .join(t),
    );
    Snapshot::read(&root, &|_: Group| true, &selection())
}

fn selection() -> Selection {
    Selection {
        per_cpu: true,
        ..Selection::default()
    }
}

fn interval(case: &str, dt: f64) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    figures(&fixture(case, "t0"), &fixture(case, "t1"), dt, &selection(), &mut out);
    out
}

fn get(v: &[(String, f64)], name: &str) -> Option<f64> {
    v.iter().find(|(n, _)| n == name).map(|(_, x)| *x)
}

#[track_caller]
fn near(v: &[(String, f64)], name: &str, want: f64) {
    let got = get(v, name).unwrap_or_else(|| panic!("{name} is missing"));
    assert!((got - want).abs() < 1e-6, "{name}: got {got}, want {want}");
}

#[test]
fn cpu_figures_follow_mpstat() {
    let v = interval("basic", 2.0);
    // Δ: user 60, system 20, idle 100, irq 10, softirq 10 → 200 ticks.
    for (n, want) in [
        ("user", 30.0),
        ("system", 10.0),
        ("idle", 50.0),
        ("irq", 5.0),
        ("softirq", 5.0),
        ("iowait", 0.0),
        ("busy", 50.0),
    ] {
        near(&v, &format!("cpu_{n}_pct"), want);
    }
    near(&v, "cpu0_busy_pct", 100.0);
    near(&v, "cpu0_user_pct", 60.0);
    near(&v, "cpu1_busy_pct", 0.0);
    near(&v, "intr_per_s", 1000.0);
    near(&v, "ctxt_per_s", 500.0);
    near(&v, "forks_per_s", 5.0);
    near(&v, "procs_running", 2.0);
    near(&v, "load_1", 0.5);
}

#[test]
fn memory_figures_follow_free_and_sar() {
    let v = interval("basic", 2.0);
    near(&v, "mem_total_mb", 2048.0);
    near(&v, "mem_used_mb", 512.0); // free(1) of procps-ng 4: total − available
    near(&v, "mem_used_pct", 25.0); // used / total
    near(&v, "mem_free_mb", 1024.0); // MemFree, as free(1)
    near(&v, "mem_available_mb", 1536.0);
    near(&v, "mem_buffers_mb", 64.0);
    near(&v, "mem_cached_mb", 256.0); // free(1)'s cache: Cached + SReclaimable
                                      // The components, each its own line of /proc/meminfo.
    near(&v, "mem_anon_mb", 512.0);
    near(&v, "mem_page_cache_mb", 192.0);
    near(&v, "mem_slab_mb", 96.0);
    // sar -r's kbmemused: total − free − buffers − cached − slab.
    near(&v, "mem_used_sar_mb", 2048.0 - 1024.0 - 64.0 - 192.0 - 96.0);
    // The per-CPU lists' free pages: 4096 + 2048 pages in /proc/zoneinfo.
    // SAFETY: sysconf only reads a configuration value and takes no pointers.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as f64;
    near(&v, "mem_pcp_free_mb", 6144.0 * page / 1_048_576.0);
    near(&v, "swap_used_mb", 256.0);
    near(&v, "page_faults_per_s", 1000.0);
    near(&v, "major_faults_per_s", 1.0);
    near(&v, "swap_in_pages_per_s", 2.0);
    near(&v, "swap_out_pages_per_s", 4.0);
}

#[test]
fn disk_figures_follow_iostat_and_skip_virtual_devices() {
    let v = interval("basic", 2.0);
    near(&v, "disk_vda_reads_per_s", 50.0);
    near(&v, "disk_vda_writes_per_s", 100.0);
    near(&v, "disk_vda_read_mbps", 0.5); // 2048 sectors = 1 MiB over 2 s
    near(&v, "disk_vda_write_mbps", 404_000.0 * 512.0 / 1_048_576.0 / 2.0);
    near(&v, "disk_vda_r_await_ms", 1.0);
    near(&v, "disk_vda_w_await_ms", 2.0);
    near(&v, "disk_vda_util_pct", 25.0);
    near(&v, "disk_vda_aqu_sz", 0.5);
    assert!(get(&v, "disk_loop0_reads_per_s").is_none(), "loop devices are left out");
}

#[test]
fn network_tcp_and_pressure() {
    let v = interval("basic", 2.0);
    near(&v, "net_eth0_rx_mbitps", 5.0);
    near(&v, "net_eth0_rx_pkts_per_s", 250.0);
    near(&v, "net_eth0_rx_errs_per_s", 0.5);
    near(&v, "net_eth0_rx_drops_per_s", 1.0);
    near(&v, "net_eth0_tx_mbitps", 0.0);
    near(&v, "tcp_retrans_per_s", 1.0);
    near(&v, "tcp_active_opens_per_s", 2.0);
    near(&v, "tcp_passive_opens_per_s", 5.0);
    near(&v, "tcp_established", 7.0);
    near(&v, "psi_cpu_some_avg10_pct", 2.5);
    near(&v, "psi_cpu_some_pct", 25.0);
    assert!(
        get(&v, "psi_mem_some_avg10_pct").is_none(),
        "a file the machine lacks gives no column, never 0"
    );
    assert!(
        v.iter().all(|(n, _)| !n.starts_with("temp_")),
        "no thermal zones here: no temperature columns"
    );
}

#[test]
fn a_counter_that_wraps_is_counted_and_one_that_resets_is_missing_not_zero() {
    let v = interval("wrap", 1.0);
    // ctxt 5000 -> 100: a reset, not a wrap: missing for this interval.
    assert!(get(&v, "ctxt_per_s").is_none(), "ctxt went backward");
    // eth0 rx_bytes 4294967000 -> 1000 while its packets went up: a 32-bit counter wrapped, so
    // 2^32 - 4294967000 + 1000 = 1296 bytes were received (sysstat's unsigned difference).
    near(&v, "net_eth0_rx_mbitps", 1296.0 * 8.0 / 1e6);
    near(&v, "net_eth0_rx_pkts_per_s", 500.0);
    near(&v, "cpu_busy_pct", 50.0);
    // The next interval starts from the new values.
    let mut next = Vec::new();
    figures(&fixture("wrap", "t1"), &fixture("wrap", "t1"), 1.0, &selection(), &mut next);
    near(&next, "ctxt_per_s", 0.0);
}

#[test]
fn a_snapshot_captured_on_a_real_machine_parses() {
    let s = fixture("captured", ".");
    assert!(s.stat.cpus.len() >= 2, "the total and at least one CPU");
    assert!(s.stat.ctxt.is_some() && s.stat.procs_running.is_some());
    assert!(s.meminfo.contains_key("MemAvailable"));
    assert!(s.nets.iter().any(|n| n.name == "lo"));
    assert!(!s.tcp.is_empty());
    let mut v = Vec::new();
    figures(&s, &s, 1.0, &selection(), &mut v);
    near(&v, "ctxt_per_s", 0.0);
    assert!(get(&v, "mem_used_pct").is_some_and(|p| (0.0..=100.0).contains(&p)));
}

#[test]
fn wrap_and_reset_rules() {
    use perflab::monitor::system::delta;
    assert_eq!(delta(10, 25), Some(15));
    assert_eq!(delta(u32::MAX as u64 - 5, 10), Some(16), "32-bit wrap");
    assert_eq!(delta(u64::MAX - 5, 10), Some(16), "64-bit wrap");
    assert_eq!(delta(5000, 100), None, "a small counter going back is a reset");
    assert_eq!(delta(3_000_000_000, 2_999_999_990), None, "a decrease near the top is not a wrap");
    assert_eq!(delta(1 << 40, 7), None, "a 64-bit counter far from its top reset");
}

/// Free pages in the per-CPU lists (`/proc/zoneinfo` pagesets) are counted (`mem_pcp_free_mb`):
/// MemFree leaves them out, and on 6.x kernels they can hold hundreds of MB.
#[test]
fn per_cpu_free_pages_are_counted() {
    let zoneinfo = "Node 0, zone      DMA\n  pages free     3840\n  pagesets\n    cpu: 0\n              count: 10\n              high:  0\n    cpu: 1\n              count: 6\n\
Node 0, zone    DMA32\n  pages free     1000\n  pagesets\n    cpu: 0\n              count: 25600\n              high:  30000\n    cpu: 1\n              count: 0\n";
    assert_eq!(perflab::monitor::parse::zoneinfo_pcp_pages(zoneinfo), Some(25616));
    assert_eq!(
        perflab::monitor::parse::zoneinfo_pcp_pages("Node 0, zone DMA\n  pages free 1\n"),
        None
    );
}

/// docs/metrics.md lists every figure the monitor records: each name produced from the snapshots above
/// and by a live sampler following a process tree appears there (a disk, interface, CPU, pressure
/// resource or selection written as D, I, N, R_K or L).
#[test]
fn every_recorded_metric_is_documented() {
    let doc = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/metrics.md")).expect("docs/metrics.md");
    let mut names: Vec<String> = interval("basic", 2.0).into_iter().map(|(n, _)| n).collect();
    let cfg = perflab::monitor::MonitorConfig {
        processes: vec![perflab::monitor::ProcessSelector::own_process("L")],
        ..Default::default()
    };
    let mut sampler = perflab::monitor::Sampler::new(&cfg).expect("sampler");
    assert!(sampler.sample().expect("prime").is_none());
    std::thread::sleep(std::time::Duration::from_millis(50));
    let live = sampler.sample().expect("sample").expect("an interval");
    names.extend(live.values.into_iter().map(|(n, _)| n));
    assert!(names.iter().any(|n| n.starts_with("proc_L_")), "no process figures: {names:?}");
    let rules: [(&str, &str); 5] = [
        (r"^cpu\d+_[a-z]+_pct$", "cpuN_*_pct"),
        (r"^disk_[^_]+_", "disk_D_"),
        (r"^net_[^_]+_", "net_I_"),
        (r"^psi_(cpu|mem|io)_(some|full)_", "psi_R_K_"),
        (r"^proc_L_", "proc_L_"),
    ];
    let mut missing = Vec::new();
    for name in names.iter().filter(|n| !n.starts_with("temp_")) {
        let mut generic = name.clone();
        for (re, with) in rules {
            let re = regex::Regex::new(re).unwrap();
            if re.is_match(&generic) {
                generic = if with.ends_with('_') {
                    re.replace(&generic, with).into_owned()
                } else {
                    with.to_string()
                };
                break;
            }
        }
        if !doc.contains(&format!("`{generic}`")) {
            missing.push(generic);
        }
    }
    missing.sort();
    missing.dedup();
    assert!(missing.is_empty(), "not in docs/metrics.md: {missing:?}");
}
