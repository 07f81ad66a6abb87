//! The sampler behind every trial runs on an absolute schedule: a phase of N intervals gives N ± 1
//! samples, however long each sample takes to handle. This is the 10-minute-at-1-s acceptance line
//! (600 ± 1) scaled down to 60 intervals of 50 ms; the count is the property, not the time taken.

use perflab::monitor::{spawn, Group, MonitorConfig};
use perflab::util::Cancel;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[test]
fn sixty_intervals_give_60_plus_or_minus_1_samples_even_with_a_slow_consumer() {
    let interval = Duration::from_millis(50);
    let cfg = MonitorConfig {
        interval,
        only: Some(vec![Group::Load]),
        per_cpu: false,
        ..MonitorConfig::default()
    };
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    // Each sample costs its consumer 20 ms (40 % of the interval). A sampler that slept one
    // interval after each sample would drift to 3 s / 70 ms ≈ 43 samples.
    let sampler = spawn(cfg, Cancel::new(), move |s| {
        std::thread::sleep(Duration::from_millis(20));
        sink.lock().expect("lock").push(s.elapsed_s);
    })
    .expect("spawn the sampler");
    std::thread::sleep(interval * 60 + interval / 2);
    sampler.stop().expect("stop");
    let seen = seen.lock().expect("lock");
    assert!((59..=61).contains(&seen.len()), "60 ± 1 samples, got {}", seen.len());
    // The k-th sample belongs to the k-th tick: no tick was taken twice.
    assert!(seen.windows(2).all(|w| w[1] > w[0]), "samples in order");
}
