//! The fuzz harnesses' runner: proptest with a fixed seed and a bounded number of cases under
//! `cargo test`; longer with `PERFLAB_FUZZ_CASES=N` (cases per target) or `PERFLAB_FUZZ_SECS=S`
//! (rounds of cases until S seconds have passed), another seed with `PERFLAB_FUZZ_SEED=N`
//! (`bench/fuzz.sh MINUTES` runs every target for that long). A failure is shrunk to the smallest
//! input proptest finds and reported with the seed and round that reproduce it.

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseResult, TestRng, TestRunner};
use std::time::Instant;

const DEFAULT_SEED: u64 = 0x0070_6572_666c_6162; // "perflab"

fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// Run `test` on values of `strategy`: `default_cases` of them under `cargo test`, or as the
/// environment asks. Prints the number of cases run (`--nocapture` shows it).
pub fn fuzz<S>(target: &str, default_cases: u32, strategy: S, test: impl Fn(S::Value) -> TestCaseResult)
where
    S: Strategy,
    S::Value: std::fmt::Debug,
{
    let seed: u64 = env("PERFLAB_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let secs: Option<f64> = env("PERFLAB_FUZZ_SECS");
    let cases: u32 = env("PERFLAB_FUZZ_CASES").unwrap_or(if secs.is_some() { 2000 } else { default_cases });
    let start = Instant::now();
    let mut total: u64 = 0;
    for round in 0u64.. {
        let config = Config {
            cases,
            failure_persistence: None,
            max_shrink_iters: 4096,
            ..Config::default()
        };
        let mut bytes = [0u8; 32];
        bytes[..8].copy_from_slice(&seed.wrapping_add(round).to_le_bytes());
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
        let mut runner = TestRunner::new_with_rng(config, rng);
        if let Err(e) = runner.run(&strategy, &test) {
            panic!("fuzz {target}: {e} (PERFLAB_FUZZ_SEED={seed}, round {round})");
        }
        total += u64::from(cases);
        if secs.is_none_or(|s| start.elapsed().as_secs_f64() >= s) {
            break;
        }
    }
    eprintln!("fuzz {target}: {total} cases in {:.1} s, 0 failures", start.elapsed().as_secs_f64());
}
