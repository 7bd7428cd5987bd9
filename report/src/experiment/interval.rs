//! Distribution-free statistics for timings on a noisy machine. Run-to-run noise here is
//! skewed (a run is slowed far more often than sped up) and has outliers, so the experiment
//! summarises per-round errors by their median with a confidence interval from order
//! statistics (the binomial sign-test interval: no assumption about the distribution), and the
//! machine's noise by a robust spread (the median absolute deviation).

use serde::{Deserialize, Serialize};

/// The median of some values with its 95 % confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub n: usize,
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// The larger distance from the median to an end of the interval.
    pub fn half_width(&self) -> f64 {
        (self.median - self.low).max(self.high - self.median)
    }
}

/// The median of `values` (None when empty).
pub fn median(values: &[f64]) -> Option<f64> {
    let v = sorted(values);
    let n = v.len();
    if n == 0 {
        return None;
    }
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

fn sorted(values: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The 1-based rank k of the lower end of the 95 % interval for the median of n values: the
/// largest k with P(B < k) <= 2.5 % for B ~ Binomial(n, 1/2). None when even the extremes do
/// not reach 95 % (n < 6).
fn lower_rank(n: usize) -> Option<usize> {
    // P(B = i) in log space, so that large n neither underflows nor overflows.
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    let (mut ln_p, mut cumulative, mut k) = (ln_half_n, 0.0, 0);
    for i in 0..n {
        cumulative += ln_p.exp();
        if cumulative > 0.025 {
            break;
        }
        k = i + 1;
        ln_p += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
    }
    (k >= 1).then_some(k)
}

/// The median of `values` and its distribution-free 95 % confidence interval [x(k), x(n+1-k)].
pub fn median_interval(values: &[f64]) -> Option<Interval> {
    let v = sorted(values);
    let n = v.len();
    let k = lower_rank(n)?;
    Some(Interval { n, median: median(&v)?, low: v[k - 1], high: v[n - k] })
}

/// A robust relative spread of `values` in %: 1.4826 median absolute deviations (the standard
/// deviation for normal data) over the median. None with fewer than three values.
pub fn robust_spread_pct(values: &[f64]) -> Option<f64> {
    if values.len() < 3 {
        return None;
    }
    let m = median(values)?;
    let deviations: Vec<f64> = values.iter().map(|x| (x - m).abs()).collect();
    Some(1.4826 * median(&deviations)? / m * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn interval_ranks_match_the_sign_test_tables() {
        // P(B <= 0) for n = 6 is 1/64 = 1.6 %: the extremes; n = 5 (3.1 %) has no interval.
        assert_eq!(lower_rank(5), None);
        assert_eq!(lower_rank(6), Some(1));
        // n = 10: P(B <= 1) = 11/1024 = 1.07 %, P(B <= 2) = 56/1024 = 5.5 %: ranks 2 and 9.
        assert_eq!(lower_rank(10), Some(2));
        // n = 20: P(B <= 5) = 2.07 %, P(B <= 6) = 5.8 %: ranks 6 and 15.
        assert_eq!(lower_rank(20), Some(6));
        // Large n stays finite and close to the normal approximation n/2 - 0.98 sqrt(n).
        let k = lower_rank(2000).unwrap() as f64;
        assert!((k - (1000.0 - 0.98 * 2000f64.sqrt())).abs() < 2.0, "{k}");
    }

    #[test]
    fn interval_of_ten_values_takes_the_second_and_ninth() {
        let values = [5.0, 1.0, 9.0, 3.0, 7.0, 2.0, 10.0, 4.0, 8.0, 6.0];
        let i = median_interval(&values).unwrap();
        assert_eq!((i.n, i.median, i.low, i.high), (10, 5.5, 2.0, 9.0));
        assert_eq!(i.half_width(), 3.5);
        assert!(median_interval(&values[..5]).is_none());
    }

    #[test]
    fn robust_spread_ignores_one_outlier() {
        // Median 100, absolute deviations 1, 0, 0, 1, 50: MAD 1, so 1.4826 %.
        let spread = robust_spread_pct(&[99.0, 100.0, 100.0, 101.0, 150.0]).unwrap();
        assert!((spread - 1.4826).abs() < 1e-9, "{spread}");
        assert_eq!(robust_spread_pct(&[1.0, 2.0]), None);
    }
}
