//! A load split over two machines, end to end: two network namespaces each run one segment
//! (`perflab run --segment i/2 --start-at T0`) against `perflab serve` in a third, over a bridge
//! (the lab of `dist_lab`); `perflab merge` adds them up. The merged request count equals the
//! plan's `requests` and the count the server served (what one machine sending the whole load
//! would have sent), each namespace sent its slice, and the merged p99 is that of every recorded
//! latency. Needs root; skipped (loudly) otherwise.

use std::process::{Child, Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::common;
use crate::dist_lab::{self, in_ns, Lab, BIN, LOAD_NS};

#[test]
fn two_namespaces_split_one_load_and_the_merge_counts_what_the_server_served() {
    if !dist_lab::is_root() {
        common::skip_unless_required("network namespaces need root");
        return;
    }
    let Some(mut lab) = Lab::make() else {
        common::skip_unless_required("cannot make network namespaces here (ip netns, veth, bridge)");
        return;
    };
    lab.serve();
    let tmp = tempfile::tempdir().expect("tmp");
    let requests = 2001;
    let plan = common::write_plan(tmp.path(), &dist_lab::plan_text("netns", requests));
    let t0 = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64() + 2.5;
    let segments: Vec<Child> = LOAD_NS
        .iter()
        .enumerate()
        .map(|(i, ns)| {
            in_ns(ns)
                .arg(BIN)
                .args(["run", "--quiet", "--segment", &format!("{i}/2"), "--start-tolerance", "30s"])
                .args(["--start-at", &format!("{t0:.3}"), "--runs-dir"])
                .arg(tmp.path().join(format!("seg{i}")))
                .arg(&plan)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start a segment")
        })
        .collect();
    for (i, s) in segments.into_iter().enumerate() {
        let out = s.wait_with_output().expect("segment");
        assert_eq!(out.status.code(), Some(0), "segment {i}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let served = lab.stop_and_count();
    let merged = tmp.path().join("merged");
    let dirs: Vec<_> = (0..2).map(|i| common::only_run_dir(&tmp.path().join(format!("seg{i}")))).collect();
    let out = Command::new(BIN)
        .arg("merge")
        .args(&dirs)
        .arg("--out")
        .arg(&merged)
        .output()
        .expect("merge");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // Segment i ran in namespace i.
    let sources: Vec<String> = (0..2).map(dist_lab::source).collect();
    dist_lab::assert_split_load(&dirs, &sources, &merged, requests, &served);
}
