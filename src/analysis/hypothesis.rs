//! Hypothesis tests used by `compare`: Welch's t, Mann–Whitney U and Shapiro–Wilk.

use super::stats::{mean, sample_sd, t975};
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Welch's unequal-variances t-test of b against a.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Welch {
    /// t = (mean b - mean a) / sqrt(s_a²/n_a + s_b²/n_b).
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// mean b - mean a.
    pub diff: f64,
    /// 95 % CI of mean b - mean a: diff ± t(0.975, df) · se.
    pub ci95_low: f64,
    pub ci95_high: f64,
}

/// Welch's t-test; None unless both samples have at least 2 values. Two constant samples give
/// p = 1 when their means are equal and p = 0 otherwise (the difference is then exact).
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (ma, mb) = (mean(a)?, mean(b)?);
    let (sa, sb) = (sample_sd(a)?, sample_sd(b)?);
    let (va, vb) = (sa * sa / na, sb * sb / nb);
    let se2 = va + vb;
    let diff = mb - ma;
    if se2 <= 0.0 {
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        let t = if diff == 0.0 { 0.0 } else { diff.signum() * f64::INFINITY };
        return Some(Welch {
            t,
            df: na + nb - 2.0,
            p,
            diff,
            ci95_low: diff,
            ci95_high: diff,
        });
    }
    let t = diff / se2.sqrt();
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0)).max(f64::MIN_POSITIVE);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = (2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0);
    let h = t975(df) * se2.sqrt();
    Some(Welch {
        t,
        df,
        p,
        diff,
        ci95_low: diff - h,
        ci95_high: diff + h,
    })
}

/// The Mann–Whitney U test (Wilcoxon rank-sum) of a against b.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MannWhitney {
    /// U of a: the number of pairs (a_i, b_j) with a_i > b_j, ties counting ½ (R's `W`).
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// True when p comes from the exact distribution of U (no ties, n_a + n_b <= 40); otherwise
    /// from the normal approximation with tie and continuity correction (as R's wilcox.test).
    pub exact: bool,
}

/// Mid-ranks (1-based, ties get their average rank) of `values`, plus Σ(t³ - t) over tie groups.
fn ranks(values: &[f64]) -> (Vec<f64>, f64) {
    let mut idx: Vec<usize> = (0..values.len()).collect();
    idx.sort_by(|&i, &j| values[i].total_cmp(&values[j]));
    let mut r = vec![0.0; values.len()];
    let mut ties = 0.0;
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && values[idx[j + 1]] == values[idx[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            r[k] = rank;
        }
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    (r, ties)
}

/// Frequencies of U for sizes (m, n) with no ties: freq[u] = number of orderings with U = u.
fn u_frequencies(m: usize, n: usize) -> Vec<f64> {
    // f[i][j] = distribution for sizes (i, j); f(i, j)[u] = f(i-1, j)[u - j] + f(i, j-1)[u].
    let mut prev: Vec<Vec<f64>> = (0..=n).map(|_| vec![1.0]).collect(); // i = 0
    for i in 1..=m {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
        cur.push(vec![1.0]); // j = 0
        for j in 1..=n {
            let mut d = vec![0.0; i * j + 1];
            for (u, c) in prev[j].iter().enumerate() {
                d[u + j] += c;
            }
            for (u, c) in cur[j - 1].iter().enumerate() {
                d[u] += c;
            }
            cur.push(d);
        }
        prev = cur;
    }
    prev.swap_remove(n)
}

/// Mann–Whitney U; None unless both samples are non-empty.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (m, n) = (a.len(), b.len());
    let all: Vec<f64> = a.iter().chain(b).copied().collect();
    let (r, ties) = ranks(&all);
    let ra: f64 = r[..m].iter().sum();
    let u = ra - (m * (m + 1)) as f64 / 2.0;
    let (mf, nf) = (m as f64, n as f64);
    if ties == 0.0 && m + n <= 40 {
        let freq = u_frequencies(m, n);
        let total: f64 = freq.iter().sum();
        let k = u.round() as usize;
        let lower: f64 = freq[..=k].iter().sum::<f64>() / total;
        let upper: f64 = freq[k..].iter().sum::<f64>() / total;
        let p = (2.0 * lower.min(upper)).min(1.0);
        return Some(MannWhitney { u, p, exact: true });
    }
    let big_n = mf + nf;
    let var = mf * nf / 12.0 * ((big_n + 1.0) - ties / (big_n * (big_n - 1.0)));
    let mu = mf * nf / 2.0;
    if var <= 0.0 {
        return Some(MannWhitney { u, p: 1.0, exact: false });
    }
    let d = u - mu;
    let z = (d - 0.5 * d.signum()) / var.sqrt();
    let p = (2.0 * (1.0 - std_normal_cdf(z.abs()))).clamp(0.0, 1.0);
    Some(MannWhitney { u, p, exact: false })
}

fn std_normal_cdf(x: f64) -> f64 {
    Normal::standard().cdf(x)
}

fn std_normal_inv(p: f64) -> f64 {
    Normal::standard().inverse_cdf(p)
}

/// The Shapiro–Wilk test of normality.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ShapiroWilk {
    pub w: f64,
    pub p: f64,
}

fn poly(c: &[f64], x: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, k| acc * x + k)
}

/// Shapiro–Wilk W and its p-value by Royston's approximation (Royston 1995, algorithm AS R94,
/// the one R's `shapiro.test` uses). None for n < 3, n > 5000 or a constant sample.
pub fn shapiro_wilk(values: &[f64]) -> Option<ShapiroWilk> {
    let n = values.len();
    if !(3..=5000).contains(&n) {
        return None;
    }
    let mut x = values.to_vec();
    x.sort_by(|a, b| a.total_cmp(b));
    if x[n - 1] - x[0] <= 0.0 {
        return None;
    }
    let nf = n as f64;
    // Coefficients a_i (antisymmetric), from the expected normal order statistics m_i.
    let m: Vec<f64> = (1..=n).map(|i| std_normal_inv((i as f64 - 0.375) / (nf + 0.25))).collect();
    let mut a = vec![0.0; n];
    if n == 3 {
        a[0] = -std::f64::consts::FRAC_1_SQRT_2;
        a[2] = std::f64::consts::FRAC_1_SQRT_2;
    } else {
        let summ2: f64 = m.iter().map(|v| v * v).sum();
        let ssumm2 = summ2.sqrt();
        let u = 1.0 / nf.sqrt();
        const C1: [f64; 6] = [0.0, 0.221157, -0.147981, -2.071190, 4.434685, -2.706056];
        const C2: [f64; 6] = [0.0, 0.042981, -0.293762, -1.752461, 5.682633, -3.582633];
        let an = m[n - 1] / ssumm2 + poly(&C1, u);
        a[n - 1] = an;
        a[0] = -an;
        if n > 5 {
            let an1 = m[n - 2] / ssumm2 + poly(&C2, u);
            let phi = (summ2 - 2.0 * m[n - 1].powi(2) - 2.0 * m[n - 2].powi(2)) / (1.0 - 2.0 * an * an - 2.0 * an1 * an1);
            a[n - 2] = an1;
            a[1] = -an1;
            for i in 2..n - 2 {
                a[i] = m[i] / phi.sqrt();
            }
        } else {
            let phi = (summ2 - 2.0 * m[n - 1].powi(2)) / (1.0 - 2.0 * an * an);
            for i in 1..n - 1 {
                a[i] = m[i] / phi.sqrt();
            }
        }
    }
    let xm = x.iter().sum::<f64>() / nf;
    let ss: f64 = x.iter().map(|v| (v - xm).powi(2)).sum();
    let num: f64 = a.iter().zip(&x).map(|(ai, xi)| ai * xi).sum();
    let w = (num * num / ss).min(1.0);
    let p = if n == 3 {
        let p = 6.0 / std::f64::consts::PI * (w.sqrt().asin() - 0.75f64.sqrt().asin());
        p.max(0.0)
    } else if n <= 11 {
        let gamma = -2.273 + 0.459 * nf;
        let mu = poly(&[0.5440, -0.39978, 0.025054, -6.714e-4], nf);
        let sigma = poly(&[1.3822, -0.77857, 0.062767, -0.0020322], nf).exp();
        let y = gamma - (1.0 - w).ln();
        if y <= 0.0 {
            0.0
        } else {
            let z = (-y.ln() - mu) / sigma;
            1.0 - std_normal_cdf(z)
        }
    } else {
        let ln = nf.ln();
        let mu = poly(&[-1.5861, -0.31082, -0.083751, 0.0038915], ln);
        let sigma = poly(&[-0.4803, -0.082676, 0.0030302], ln).exp();
        let z = ((1.0 - w).ln() - mu) / sigma;
        1.0 - std_normal_cdf(z)
    };
    Some(ShapiroWilk { w, p: p.clamp(0.0, 1.0) })
}
