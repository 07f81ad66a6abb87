//! The sampler against known answers on this machine: a busy loop, 1 GiB touched, 4 processes, 200 MB
//! written and fsynced. These tests serialize on one lock so that they do not disturb each other.

use perflab::monitor::{MonitorConfig, ProcessSelector, Sample, Sampler};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());
const BIN: &str = env!("CARGO_BIN_EXE_perflab");

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn samples_of(out: &str) -> Vec<serde_json::Value> {
    out.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// Whole-machine busy % over `window`, from /proc/stat (user+nice+system+irq+softirq+steal).
fn machine_busy_pct(window: Duration) -> f64 {
    let (b0, t0) = proc_stat_busy();
    std::thread::sleep(window);
    let (b1, t1) = proc_stat_busy();
    100.0 * (b1 - b0) as f64 / (t1 - t0).max(1) as f64
}

/// (busy, total) jiffies of the whole machine, read directly (not through perflab).
fn proc_stat_busy() -> (u64, u64) {
    {
        let t = std::fs::read_to_string("/proc/stat").expect("/proc/stat");
        let f: Vec<u64> = t
            .lines()
            .next()
            .expect("cpu line")
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        let idle = f[3] + f.get(4).copied().unwrap_or(0);
        let total: u64 = f.iter().take(8).sum();
        (total - idle, total)
    }
}

/// Wait (up to 20 s: under a parallel test run the other tests keep it busy longer, and the
/// agreement checks hold whatever runs) until the machine is below 15 % busy: the busy-loop answers
/// (50 % of two cores, 100 % for the process) hold on an otherwise idle machine only. Returns
/// whether it got quiet.
fn wait_for_quiet() -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let b = machine_busy_pct(Duration::from_secs(1));
        if b < 15.0 {
            return true;
        }
        if Instant::now() > deadline {
            eprintln!("note: the machine stayed busy ({b:.0} % of all CPUs in use by others)");
            return false;
        }
    }
}

#[test]
fn a_busy_loop_reads_50_pct_of_two_cores_and_100_pct_for_its_process() {
    let _g = lock();
    let ncpu = perflab::util::cpus::online_cpus().len();
    let quiet = wait_for_quiet();
    let started = Instant::now();
    #[allow(clippy::zombie_processes)] // reaped below with wait4, for its rusage
    let mut busy = Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .expect("spawn busy loop");
    std::thread::sleep(Duration::from_millis(300));
    let stat0 = proc_stat_busy();
    let out = Command::new(BIN)
        .args(["monitor", "--interval", "1s", "--count", "3", "--jsonl", "-", "--pid"])
        .arg(busy.id().to_string())
        .output()
        .expect("run monitor");
    let stat1 = proc_stat_busy();
    // The whole machine over the monitor's run, read directly from /proc/stat (not through perflab).
    let machine = 100.0 * (stat1.0 - stat0.0) as f64 / (stat1.1 - stat0.1).max(1) as f64;
    // The loop's own account of its CPU share over its whole life (wait4's rusage): the answer for
    // `--pid` whatever else the machine does.
    let _ = busy.kill();
    let mut status = 0;
    // SAFETY: rusage is a C struct of integers, for which all-zero bytes are a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `status` and `ru` are valid, writable locals for the whole call; wait4 only fills them.
    let waited = unsafe { libc::wait4(busy.id() as i32, &mut status, 0, &mut ru) };
    let life = started.elapsed().as_secs_f64();
    assert_eq!(waited, busy.id() as i32, "wait4");
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let own_pct = 100.0 * (secs(ru.ru_utime) + secs(ru.ru_stime)) / life;

    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows = samples_of(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(rows.len(), 3, "three samples");
    let mean = |k: &str| rows.iter().filter_map(|r| r[k].as_f64()).sum::<f64>() / rows.len() as f64;
    let proc_cpu = mean(&format!("proc_{}_cpu_pct", busy.id()));
    let total = mean("cpu_busy_pct");
    // Whatever else runs: the monitor agrees with the loop's own account and with /proc/stat.
    assert!(
        (proc_cpu - own_pct).abs() <= 12.0,
        "the busy process: monitor {proc_cpu:.1} %, its own rusage {own_pct:.1} % (want equal ± 12)"
    );
    assert!(
        (total - machine).abs() <= 12.0,
        "total CPU busy: monitor {total:.1} %, /proc/stat over the same run {machine:.1} % (want equal ± 12)"
    );
    // Others' share of the machine while it ran (the loop's is own_pct / ncpu).
    let others = machine - own_pct / ncpu as f64;
    if !quiet || others > 10.0 {
        // The answers below assume an otherwise idle machine; say plainly that they were not checked.
        eprintln!("note: not an idle machine (others used {others:.0} % of it during the run), so 100 ± 12 % (process) and 50 ± 12 % (total) are not checked; the process got {own_pct:.0} % by its own account, the monitor read {proc_cpu:.0} % and a total of {total:.0} %");
        return;
    }
    assert!(
        (proc_cpu - 100.0).abs() <= 12.0,
        "the busy process: {proc_cpu:.1} % (want 100 ± 12)"
    );
    let want = 100.0 / ncpu as f64;
    if ncpu == 2 {
        assert!(
            (total - want).abs() <= 12.0,
            "total CPU busy: {total:.1} % (want 50 ± 12 on 2 cores)"
        );
    } else {
        eprintln!(
            "note: {ncpu} CPUs here; the total-CPU check (50 ± 12 %) is written for 2 cores; got {total:.1} % (one core = {want:.1} %)"
        );
        assert!(total >= want - 12.0, "at least one core busy: {total:.1}");
    }
}

/// Not a test of its own, so ignored: `a_child_touching_1_gib_...` runs it as a child
/// (`--ignored`, PERFLAB_TEST_CHILD=alloc): it says "started", waits for a line on stdin, allocates
/// and touches 1 GiB, says "ready", and holds it until its stdin closes.
#[test]
#[ignore = "the child process of a_child_touching_1_gib_moves_used_memory_and_its_rss_by_1_gib"]
fn child_alloc() {
    assert_eq!(
        std::env::var("PERFLAB_TEST_CHILD").as_deref(),
        Ok("alloc"),
        "run by its parent test only"
    );
    // Allocate only when told to, so the parent's "before" reading precedes every page.
    println!("started");
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    let v = vec![7u8; 1 << 30];
    println!("ready {}", v[v.len() - 1]);
    let _ = std::io::stdout().flush();
    line.clear();
    let _ = std::io::stdin().read_line(&mut line);
    drop(v);
}

fn sample(s: &mut Sampler) -> Sample {
    loop {
        if let Some(x) = s.sample().expect("sample") {
            return x;
        }
    }
}

/// One child allocating 1 GiB: (its RSS change, the machine's anonymous memory change, how much
/// anonymous memory drifted by itself in the second before and the second after), all in MB.
/// Anonymous memory (AnonPages) is what the allocation adds to; used memory as `free` prints it also
/// moves with the free pages held in per-CPU lists, which it does not count (docs/metrics.md).
fn alloc_once() -> (f64, f64, f64) {
    let mut child = Command::new(std::env::current_exe().expect("exe"))
        .args([
            "--exact",
            "monitor_truth::child_alloc",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("PERFLAB_TEST_CHILD", "alloc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn child");
    let pid = child.id() as i32;
    let cfg = MonitorConfig {
        processes: vec![ProcessSelector::tree("child", pid)],
        per_cpu: false,
        ..MonitorConfig::default()
    };
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut wait_for = |word: &str| {
        let mut line = String::new();
        while !line.contains(word) {
            line.clear();
            if out.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
        }
        assert!(line.contains(word), "the child said {word:?}: {line:?}");
    };
    wait_for("started");
    let mut s = Sampler::new(&cfg).expect("sampler");
    s.sample().expect("prime");
    std::thread::sleep(Duration::from_secs(1));
    let still0 = sample(&mut s);
    std::thread::sleep(Duration::from_secs(1));
    let before = sample(&mut s);
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "go").expect("tell the child to allocate");
    stdin.flush().expect("flush");
    wait_for("ready ");
    std::thread::sleep(Duration::from_millis(100));
    let after = sample(&mut s);
    std::thread::sleep(Duration::from_secs(1));
    let still1 = sample(&mut s);
    drop(stdin);
    let _ = child.wait();
    let u = |x: &Sample| x.get("mem_anon_mb").expect("anonymous memory");
    let used = u(&after) - u(&before);
    let drift = (u(&before) - u(&still0)).abs().max((u(&still1) - u(&after)).abs());
    let rss = after.get("proc_child_rss_mb").expect("rss") - before.get("proc_child_rss_mb").expect("rss");
    (rss, used, drift)
}

#[test]
fn a_child_touching_1_gib_moves_anonymous_memory_and_its_rss_by_1_gib() {
    let _g = lock();
    let _mem = crate::common::machine_memory_lock();
    let gib_mb = 1024.0;
    // Anonymous memory moves by the child's 1 GiB only if nothing else allocates or frees meanwhile (other
    // sessions' builds share this machine): up to 3 attempts, judged by it holding within
    // 30 MB by itself in the second before and the second after the allocation; the last one, on a
    // machine that never held still, with that drift allowed for.
    const ATTEMPTS: usize = 3;
    for attempt in 1..=ATTEMPTS {
        let (rss, used, drift) = alloc_once();
        assert!((rss - gib_mb).abs() <= 0.1 * gib_mb, "RSS moved by {rss:.0} MB (want 1024 ± 10 %)");
        if drift <= 30.0 || attempt == ATTEMPTS {
            let allowed = 0.1 * gib_mb + if drift > 30.0 { drift } else { 0.0 };
            assert!(
                (used - gib_mb).abs() <= allowed,
                "anonymous memory moved by {used:.0} MB (want 1024 ± {allowed:.0}; it drifted {drift:.0} MB by itself around it)"
            );
            return;
        }
        eprintln!(
            "note: attempt {attempt}: anonymous memory drifted {drift:.0} MB by itself around the allocation (it moved by {used:.0} MB)"
        );
    }
}

#[test]
fn a_child_that_forks_3_more_is_counted_as_4_processes_with_match() {
    let _g = lock();
    let mut sh = Command::new("sh")
        .args(["-c", ": perflab-fork-marker; sleep 20 & sleep 20 & sleep 20 & wait"])
        .spawn()
        .expect("spawn");
    // Wait until the shell has forked its 3 children (read from /proc directly).
    let children_of = |ppid: u32| -> usize {
        std::fs::read_dir("/proc")
            .map(|d| {
                d.flatten()
                    .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
                    .filter(|st| {
                        st.rsplit_once(") ")
                            .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                            == Some(ppid)
                    })
                    .count()
            })
            .unwrap_or(0)
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while children_of(sh.id()) < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = Command::new(BIN)
        .args([
            "monitor",
            "--interval",
            "200ms",
            "--count",
            "1",
            "--only",
            "proc",
            "--jsonl",
            "-",
            "--match",
            "perflab-fork-marker",
        ])
        .output()
        .expect("monitor");
    let _ = Command::new("pkill").args(["-P", &sh.id().to_string()]).status();
    let _ = sh.kill();
    let _ = sh.wait();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows = samples_of(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["proc_match_count"].as_f64(), Some(4.0), "{}", rows[0]);
    assert!(rows[0].get("cpu_busy_pct").is_none(), "--only proc");
}

/// The block device holding `path` (its whole disk), from its st_dev via /sys/dev/block.
fn backing_disk(path: &std::path::Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).ok()?.dev();
    let (major, minor) = (libc_major(dev), libc_minor(dev));
    if major == 0 {
        return None; // overlay, tmpfs, ...
    }
    let link = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    let node = if link.join("partition").exists() { link.parent()? } else { &link };
    node.file_name().map(|n| n.to_string_lossy().into_owned())
}

fn libc_major(dev: u64) -> u64 {
    ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff)
}

fn libc_minor(dev: u64) -> u64 {
    ((dev >> 12) & 0xffff_ff00) | (dev & 0xff)
}

#[test]
fn writing_and_fsyncing_200_mb_shows_on_the_backing_device() {
    let _g = lock();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tmp dir on disk");
    let disk = backing_disk(dir.path());
    let me = std::process::id() as i32;
    let cfg = MonitorConfig {
        interval: Duration::from_millis(250),
        processes: vec![ProcessSelector::tree("me", me)],
        per_cpu: false,
        ..MonitorConfig::default()
    };
    let total = std::sync::Arc::new(Mutex::new(Vec::<Sample>::new()));
    let sink = total.clone();
    let bg = perflab::monitor::spawn(cfg, perflab::util::Cancel::new(), move |s| sink.lock().expect("lock").push(s)).expect("spawn");
    let mut f = std::fs::File::create(dir.path().join("big")).expect("create");
    let chunk = vec![0x5au8; 1 << 20];
    for _ in 0..200 {
        f.write_all(&chunk).expect("write");
    }
    f.sync_all().expect("fsync");
    std::thread::sleep(Duration::from_millis(600));
    bg.marker().mark().expect("mark");
    bg.stop().expect("stop");
    let samples = total.lock().expect("lock").clone();
    let sum = |name: &str| -> f64 {
        let mut last = 0.0;
        samples
            .iter()
            .map(|s| {
                let dt = s.elapsed_s - last;
                last = s.elapsed_s;
                s.get(name).unwrap_or(0.0) * dt
            })
            .sum()
    };
    match disk {
        Some(d) if samples.iter().any(|s| s.get(&format!("disk_{d}_write_mbps")).is_some()) => {
            let mb = sum(&format!("disk_{d}_write_mbps")) * 1_048_576.0 / 1e6;
            assert!(mb >= 150.0, "{d}: {mb:.0} MB written (want at least 150)");
        }
        other => {
            eprintln!(
                "note: the backing device of {} could not be found ({other:?}); checking the process's write bytes instead",
                dir.path().display()
            );
            let mb = sum("proc_me_write_bytes_per_s") / 1e6;
            assert!(mb >= 150.0, "the process wrote {mb:.0} MB (want at least 150)");
        }
    }
}

#[test]
fn bad_input_is_one_line_and_exit_2_and_writes_nothing() {
    let tmp = tempfile::tempdir().expect("tmp");
    let csv = tmp.path().join("out.csv");
    for args in [
        vec!["--interval", "5ms"],
        vec!["--interval", "0"],
        vec!["--disk", "nosuchdisk0"],
        vec!["--net", "nosuchif0"],
        vec!["--pid", "999999999"],
        vec!["--only", "cpu,bogus"],
    ] {
        let out = Command::new(BIN)
            .arg("monitor")
            .args(&args)
            .arg("--csv")
            .arg(&csv)
            .arg("--count")
            .arg("1")
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(!csv.exists(), "{args:?}: nothing written half-way");
    }
    let out = Command::new(BIN)
        .args(["monitor", "--count", "1", "--csv", "/nonexistent-dir/x.csv"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    // One output fine, the other unwritable: the existing file is left exactly as it was.
    std::fs::write(&csv, "keep me\n").expect("write");
    for (a, b) in [("--csv", "--jsonl"), ("--jsonl", "--csv")] {
        let out = Command::new(BIN)
            .args(["monitor", "--count", "1", a])
            .arg(&csv)
            .args([b, "/nonexistent-dir/x"])
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(
            std::fs::read_to_string(&csv).expect("read"),
            "keep me\n",
            "{a} FILE {b} /nonexistent-dir/x"
        );
    }
    let out = Command::new(BIN)
        .args(["monitor", "--count", "1", "--csv"])
        .arg(tmp.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "a directory is not a file");
}

#[test]
fn a_followed_process_that_exits_is_gone_not_an_error() {
    let mut victim = Command::new("sleep").arg("30").spawn().expect("spawn");
    let pid = victim.id();
    let mut mon = Command::new(BIN)
        .args([
            "monitor",
            "--interval",
            "300ms",
            "--count",
            "4",
            "--only",
            "proc",
            "--jsonl",
            "-",
            "--pid",
        ])
        .arg(pid.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run");
    // The first sample sees it alive; then it exits, and the later samples must say it is gone.
    let mut lines = BufReader::new(mon.stdout.take().expect("stdout"));
    let mut first = String::new();
    lines.read_line(&mut first).expect("first sample");
    let _ = victim.kill();
    let _ = victim.wait();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut lines, &mut rest).expect("read");
    let out = mon.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let rows = samples_of(&format!("{first}{rest}"));
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0][format!("proc_{pid}_count")].as_f64(), Some(1.0), "{}", rows[0]);
    let last = &rows[3];
    assert_eq!(last[format!("proc_{pid}_count")].as_f64(), Some(0.0), "{last}");
    assert!(
        last.get(format!("proc_{pid}_cpu_pct")).is_none(),
        "no figures for a gone process, never zeros: {last}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is gone"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
