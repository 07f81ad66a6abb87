//! One test per tool form of [`super`]: the run time each tool's own options give.

use super::*;

fn argv(s: &str) -> ToolTime {
    of_argv(&s.split_whitespace().map(str::to_string).collect::<Vec<_>>())
}

fn secs(n: f64) -> Duration {
    Duration::from_secs_f64(n)
}

fn exactly(t: &ToolTime) -> Option<f64> {
    match t.time {
        RunTime::Exactly(d) => Some(d.as_secs_f64()),
        _ => None,
    }
}

fn at_most(t: &ToolTime) -> Option<f64> {
    match t.time {
        RunTime::AtMost(d) => Some(d.as_secs_f64()),
        _ => None,
    }
}

#[test]
fn stress_ng_timeout_in_every_spelling_and_unit() {
    for (cmd, s) in [
        ("stress-ng --cpu 2 -t 60", 60.0),
        ("stress-ng --cpu 2 -t 60s", 60.0),
        ("stress-ng --cpu 2 -t60s", 60.0),
        ("stress-ng --cpu 2 --timeout 2m", 120.0),
        ("stress-ng --cpu 2 --timeout=1h", 3600.0),
        ("stress-ng --cpu 2 --timeout 1d", 86_400.0),
        // The last one wins, as getopt takes it.
        ("stress-ng -t 5 --cpu 1 -t 7s", 7.0),
    ] {
        assert_eq!(exactly(&argv(cmd)), Some(s), "{cmd}");
    }
    assert_eq!(argv("stress-ng --cpu 1 -t 60s").what, "stress-ng -t 60s");
    assert_eq!(argv("stress-ng --cpu 1 --timeout=60s").what, "stress-ng --timeout=60s");
    // Without --timeout: stress-ng's own default of a day.
    let t = argv("stress-ng --cpu 1");
    assert_eq!(
        (exactly(&t), t.what.as_str()),
        (Some(86_400.0), "stress-ng without --timeout (1 day by default)")
    );
    // A bogo-ops count can end it first; 0 is no limit; a sequence of stressors is not known.
    assert_eq!(at_most(&argv("stress-ng --cpu 1 --cpu-ops 1000 -t 30s")), Some(30.0));
    assert_eq!(argv("stress-ng --cpu 1 --cpu-ops 1000").time, RunTime::Unknown);
    assert_eq!(argv("stress-ng --cpu 1 -t 0").time, RunTime::Unknown);
    assert_eq!(argv("stress-ng --seq 2 -t 10s").time, RunTime::Unknown);
}

#[test]
fn fio_runtime_units_ramp_and_time_based() {
    for (cmd, s) in [
        ("fio --name=a --runtime=60 --time_based", 60.0),
        ("fio --name=a --runtime 60 --time_based", 60.0),
        ("fio --name=a --runtime=500ms --time_based", 0.5),
        ("fio --name=a --runtime=2m --time_based", 120.0),
        ("fio --name=a --runtime=1h --time_based", 3600.0),
        ("fio --name=a --timeout=30 --time_based", 30.0),
        ("fio --name=a --runtime=10 --ramp_time=5 --time_based", 15.0),
        // Per-job runtimes run side by side: the longest.
        ("fio --name=a --runtime=10 --name=b --runtime=20 --time_based", 20.0),
    ] {
        assert_eq!(exactly(&argv(cmd)), Some(s), "{cmd}");
    }
    let t = argv("fio --name=a --size=1G --runtime=60");
    assert_eq!(
        (at_most(&t), t.what.as_str()),
        (Some(60.0), "fio --runtime=60 without --time_based")
    );
    assert_eq!(argv("fio --name=a --size=1G").time, RunTime::Unknown);
    assert_eq!(argv("fio jobs.fio").what, "fio with a job file");
    assert_eq!(argv("fio --name=a --runtime=0 --time_based").time, RunTime::Unknown);
}

#[test]
fn sysbench_time_default_and_events() {
    assert_eq!(exactly(&argv("sysbench cpu --time=30 run")), Some(30.0));
    assert_eq!(exactly(&argv("sysbench oltp_read_only --threads=4 --max-time=20 run")), Some(20.0));
    let t = argv("sysbench cpu run");
    assert_eq!(
        (exactly(&t), t.what.as_str()),
        (Some(10.0), "sysbench without --time (10s by default)")
    );
    assert_eq!(at_most(&argv("sysbench cpu --events=1000 --time=30 run")), Some(30.0));
    assert_eq!(argv("sysbench cpu --events=1000 --time=0 run").time, RunTime::Unknown);
    assert_eq!(argv("sysbench oltp_read_only prepare").time, RunTime::Unknown);
}

#[test]
fn iperf3_client_time_default_and_omit() {
    assert_eq!(exactly(&argv("iperf3 -c 127.0.0.1 -t 30 -J")), Some(30.0));
    assert_eq!(exactly(&argv("iperf3 -c 127.0.0.1 --time 30")), Some(30.0));
    assert_eq!(exactly(&argv("iperf3 -c 127.0.0.1 -J")), Some(10.0));
    assert_eq!(exactly(&argv("iperf3 -c 127.0.0.1 -t 10 -O 2")), Some(12.0));
    assert_eq!(argv("iperf3 -c 127.0.0.1 -n 1G").time, RunTime::Unknown);
    assert_eq!(argv("iperf3 -s -p 5201").time, RunTime::Unknown);
}

#[test]
fn wrk_duration_and_default() {
    assert_eq!(exactly(&argv("wrk -t2 -c10 -d30s http://127.0.0.1:1/")), Some(30.0));
    assert_eq!(exactly(&argv("wrk -d 2m http://127.0.0.1:1/")), Some(120.0));
    assert_eq!(exactly(&argv("wrk --duration 15 http://127.0.0.1:1/")), Some(15.0));
    assert_eq!(exactly(&argv("wrk -c10 http://127.0.0.1:1/")), Some(10.0));
}

#[test]
fn ab_time_limit_is_an_upper_bound() {
    assert_eq!(at_most(&argv("ab -t 10 -n 100000 -c 2 http://127.0.0.1:1/")), Some(10.0));
    assert_eq!(argv("ab -n 10000 -c 10 http://127.0.0.1:1/").time, RunTime::Unknown);
}

#[test]
fn hey_go_durations() {
    assert_eq!(exactly(&argv("hey -z 30s http://127.0.0.1:1/")), Some(30.0));
    assert_eq!(exactly(&argv("hey -z 1m30s http://127.0.0.1:1/")), Some(90.0));
    assert_eq!(exactly(&argv("hey -z=500ms http://127.0.0.1:1/")), Some(0.5));
    assert_eq!(argv("hey -n 200 http://127.0.0.1:1/").time, RunTime::Unknown);
}

#[test]
fn pgbench_memtester_and_unknown_programs() {
    assert_eq!(exactly(&argv("pgbench -T 60 -c 4 bench")), Some(60.0));
    assert_eq!(argv("pgbench -t 1000 bench").time, RunTime::Unknown);
    let t = argv("memtester 256M 1");
    assert_eq!((t.time, t.what.as_str()), (RunTime::Unknown, "memtester"));
    assert_eq!(argv("./bench.sh").what, "bench.sh");
}

#[test]
fn sleep_and_timeout() {
    assert_eq!(exactly(&argv("sleep 5")), Some(5.0));
    assert_eq!(exactly(&argv("sleep 1m 30")), Some(90.0));
    assert_eq!(exactly(&argv("sleep 0.5")), Some(0.5));
    assert_eq!(argv("sleep infinity").time, RunTime::Unknown);
    // timeout bounds the command it runs.
    assert_eq!(exactly(&argv("timeout 10 stress-ng --cpu 1 -t 5s")), Some(5.0));
    let t = argv("timeout -s INT 10s stress-ng --cpu 1 -t 60s");
    assert_eq!(
        (exactly(&t), t.what.as_str()),
        (Some(10.0), "timeout 10s (stopping stress-ng -t 60s)")
    );
    assert_eq!(at_most(&argv("timeout --kill-after=2 30 memtester 1G")), Some(30.0));
    assert_eq!(exactly(&argv("timeout 0 sleep 3")), Some(3.0));
}

#[test]
fn wrappers_are_looked_through() {
    for cmd in [
        "env A=1 stress-ng --cpu 1 -t 20s",
        "A=1 nice -n 5 stress-ng --cpu 1 -t 20s",
        "taskset -c 0 stress-ng --cpu 1 -t 20s",
        "sudo -u bench /usr/bin/stress-ng --cpu 1 -t 20s",
    ] {
        assert_eq!(exactly(&argv(cmd)), Some(20.0), "{cmd}");
    }
}

#[test]
fn shell_strings_and_sh_c() {
    let sh = |s: &str| of_command(&CommandLine::Shell(s.into()));
    assert_eq!(exactly(&sh("stress-ng --cpu 1 --timeout \"30s\" --metrics-brief")), Some(30.0));
    // A pipeline into a quick filter, redirections, comments.
    assert_eq!(
        exactly(&sh("fio --name=a --runtime=20 --time_based 2>&1 | tee /tmp/x.log # note")),
        Some(20.0)
    );
    // In sequence they add up; side by side, the longest.
    let t = sh("sleep 2; stress-ng --cpu 1 -t 10s && echo done");
    assert_eq!((exactly(&t), t.what.as_str()), (Some(12.0), "sleep 2 then stress-ng -t 10s"));
    assert_eq!(exactly(&sh("sleep 3 & sleep 5")), Some(5.0));
    assert_eq!(sh("for i in 1 2; do sleep 1; done").time, RunTime::Unknown);
    assert_eq!(sh("sleep $(cat /tmp/t)").time, RunTime::Unknown);
    // sh -c / bash -c in a list.
    let list = |v: &[&str]| of_command(&CommandLine::Argv(v.iter().map(|s| s.to_string()).collect()));
    assert_eq!(
        exactly(&list(&["sh", "-c", "wrk -d 20s http://127.0.0.1:1/ > out.txt"])),
        Some(20.0)
    );
    assert_eq!(exactly(&list(&["bash", "-ec", "cd /tmp && sysbench cpu --time=7 run"])), Some(7.0));
    assert_eq!(list(&["sh", "run.sh"]).time, RunTime::Unknown);
    assert_eq!(secs(1.0), Duration::from_secs(1));
}
