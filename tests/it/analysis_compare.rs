//! Hypothesis tests against published answers, and the comparison's calibration.

use perflab::analysis::compare::{compare, Test, Verdict, MIN_SAMPLES};
use perflab::analysis::hypothesis::{mann_whitney, shapiro_wilk, welch};
use perflab::workload::Better;
use rand::{rngs::StdRng, RngExt, SeedableRng};

/// Wikipedia, "Welch's t-test", Examples (example 1): Welch t = 2.46, ν = 25.0, p = 0.021.
/// (Unrounded, computed independently: t = 2.455356, ν = 24.98853, p = 0.02138.)
#[test]
fn welch_textbook_example() {
    let a = [
        27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4,
    ];
    let b = [
        27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4,
    ];
    let w = welch(&a, &b).expect("n >= 2");
    assert!((w.t - 2.455356).abs() < 1e-5, "t {}", w.t);
    assert!((w.df - 24.98853).abs() < 1e-4, "df {}", w.df);
    assert!((w.p - 0.02138).abs() < 1e-4, "p {}", w.p);
    assert!(w.ci95_low > 0.0 && w.ci95_high > w.ci95_low);
}

/// R's `?wilcox.test` example (Hollander & Wolfe 1973, p. 69): W = 35, one-sided p = 0.1272,
/// so the two-sided exact p = 0.2544 (checked by enumerating all 3003 splits).
#[test]
fn mann_whitney_textbook_example() {
    let x = [0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46];
    let y = [1.15, 0.88, 0.90, 0.74, 1.21];
    let mw = mann_whitney(&x, &y).expect("non-empty");
    assert_eq!(mw.u, 35.0);
    assert!(mw.exact);
    assert!((mw.p - 0.254412).abs() < 1e-5, "p {}", mw.p);
    // Complete separation, 5 v 5: U = 0, p = 2 / C(10, 5) = 2 / 252 (R: 0.007937).
    let sep = mann_whitney(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).expect("ok");
    assert_eq!(sep.u, 0.0);
    assert!((sep.p - 2.0 / 252.0).abs() < 1e-12);
}

/// With ties the normal approximation with tie and continuity correction is used (as R):
/// a = 1,2,2,3,3,3, b = 3,4,4,5,5,6: U = 1.5 (three ½ ties); tie groups 2,4,2,2 give
/// Σ(t³ − t) = 78, σ² = 36/12 · (13 − 78/132) = 37.2273;
/// z = (1.5 − 18 + 0.5) / √37.2273 = −2.62234, p = 2 · Φ(−2.62234) = 0.0087328.
#[test]
fn mann_whitney_ties_normal_approximation() {
    let mw = mann_whitney(&[1.0, 2.0, 2.0, 3.0, 3.0, 3.0], &[3.0, 4.0, 4.0, 5.0, 5.0, 6.0]).expect("ok");
    assert_eq!(mw.u, 1.5);
    assert!(!mw.exact);
    assert!((mw.p - 0.0087328).abs() < 1e-6, "p {}", mw.p);
}

/// R: shapiro.test(c(1, 2, 4)) → W = 0.96429, p = 0.6369 (exact for n = 3).
/// Shapiro & Wilk (1965), weights of 11 men: W = 0.79, significant at the 1 % level.
#[test]
fn shapiro_wilk_known_answers() {
    let s = shapiro_wilk(&[1.0, 2.0, 4.0]).expect("n = 3");
    assert!((s.w - 0.964286).abs() < 1e-5, "W {}", s.w);
    assert!((s.p - 0.6369).abs() < 1e-3, "p {}", s.p);
    let men = [148.0, 154.0, 158.0, 160.0, 161.0, 162.0, 166.0, 170.0, 182.0, 195.0, 236.0];
    let s = shapiro_wilk(&men).expect("n = 11");
    assert!((s.w - 0.79).abs() < 0.005, "W {}", s.w);
    assert!(s.p < 0.01, "p {}", s.p);
    assert!(shapiro_wilk(&[1.0, 1.0, 1.0]).is_none());
}

fn normal(rng: &mut StdRng, mean: f64, sd: f64) -> f64 {
    // Box–Muller.
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    mean + sd * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn sample(rng: &mut StdRng, n: usize, mean: f64, sd: f64) -> Vec<f64> {
    (0..n).map(|_| normal(rng, mean, sd)).collect()
}

#[test]
fn calibration_same_distribution_is_not_significant() {
    let mut rng = StdRng::seed_from_u64(6);
    let quiet = (0..200)
        .filter(|_| {
            let (a, b) = (sample(&mut rng, 10, 1000.0, 50.0), sample(&mut rng, 10, 1000.0, 50.0));
            compare(&a, &b, Better::Higher).verdict == Verdict::NoSignificantDifference
        })
        .count();
    assert!(quiet >= 186, "only {quiet} of 200 said no significant difference");
}

#[test]
fn calibration_ten_percent_shift_is_found() {
    let mut rng = StdRng::seed_from_u64(7);
    let found = (0..200)
        .filter(|_| {
            let a = sample(&mut rng, 10, 1000.0, 20.0);
            let b = sample(&mut rng, 10, 1100.0, 22.0);
            compare(&a, &b, Better::Higher).verdict == Verdict::Improved
        })
        .count();
    assert!(found >= 190, "only {found} of 200 found the 10 % shift");
}

#[test]
fn verdicts_follow_the_better_direction() {
    let a = [100.0, 101.0, 99.0, 100.5, 99.5];
    let b = [110.0, 111.0, 109.0, 110.5, 109.5];
    let up = compare(&a, &b, Better::Higher);
    assert_eq!(up.verdict, Verdict::Improved);
    assert!((up.delta_pct.expect("mean a != 0") - 10.0).abs() < 1e-9);
    let (lo, hi) = (up.ci95_low_pct.expect("ci"), up.ci95_high_pct.expect("ci"));
    assert!(lo < 10.0 && 10.0 < hi && lo > 0.0);
    assert_eq!(compare(&a, &b, Better::Lower).verdict, Verdict::Regressed);
    assert_eq!(compare(&b, &a, Better::Lower).verdict, Verdict::Improved);
    assert_eq!(compare(&a, &b, Better::Neither).verdict, Verdict::Changed);
    let few = compare(&a[..2], &b, Better::Higher);
    assert_eq!(few.verdict, Verdict::TooFewSamples { need: MIN_SAMPLES });
    assert_eq!(few.p, None);
    let same = compare(&a, &a, Better::Higher);
    assert_eq!(same.verdict, Verdict::NoSignificantDifference);
}

#[test]
fn skewed_samples_use_mann_whitney() {
    // One large outlier per side makes both samples clearly non-normal (Shapiro–Wilk p < 0.05).
    let a = [10.0, 10.1, 10.2, 10.0, 10.1, 10.2, 10.0, 10.1, 10.2, 30.0];
    let b = [11.0, 11.1, 11.2, 11.0, 11.1, 11.2, 11.0, 11.1, 11.2, 31.0];
    let c = compare(&a, &b, Better::Lower);
    assert!(c.normality_rejected);
    assert_eq!(c.test, Test::MannWhitneyU);
    assert_eq!(c.df, None);
    assert_eq!(c.verdict, Verdict::Regressed);
    // Welch alone would not see it: the outliers inflate the variance.
    assert!(welch(&a, &b).expect("ok").p > 0.05);
}

#[test]
fn deterministic() {
    let a = [1.0, 2.0, 3.0, 4.0, 5.5];
    let b = [2.0, 3.0, 4.0, 5.0, 6.0];
    assert_eq!(compare(&a, &b, Better::Higher), compare(&a, &b, Better::Higher));
}
