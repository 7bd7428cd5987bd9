//! Pooling an event's successive in-place estimates into the cost compensation uses.
//!
//! An event is estimated again at every power of four of its calls (`inplace::due`), and
//! compensation reads the event's cost at every exit, so the cost it needs is the one the
//! event's calls have now. Each estimate comes with the standard error of its own windows, but
//! the cost itself moves through the run by more than those errors say: the first estimate of
//! an event is often made while caches and predictors still warm up (NPB IS `randlc`: 7.3 ± 0.03
//! ns, then 6.5 ± 0.01, 6.3 ± 0.16, 6.4 ± 0.1), and the core's phases come and go. So the
//! estimates are read as noisy measurements of a cost that drifts as a random walk, and pooled
//! by the filter that is optimal for that model (a scalar Kalman filter): each new estimate
//! moves the cost by the share its precision earns against the uncertainty the drift has added
//! since the last one. The drift's variance per estimate is the spread between the event's
//! estimates beyond their own errors (DerSimonian and Laird's τ², 1986). A noisy estimate then
//! moves the cost little, and a precise one that disagrees moves it as far as the drift allows.
//!
//! The drift's variance includes the estimate at hand, so one far-off estimate can take the
//! cost with it (BT `flux_jacobian`: 59.5 ± 15.7 at warm-up, 25.9 ± 1.5, then 44.0 ± 4.8, which
//! the filter followed to 42 for 750 K calls; the later ones were 24 to 28). Taking the drift
//! from the estimates before it, without the warm-up's, fixes that case but makes the filter a
//! whole estimate late on real moves: NPB IS.W `randlc` measured
//! 29.6 ± 0.07, 30.2 ± 0.3, then 27.2 ± 0.2 and 27.8 ± 0.2 in three runs out of three, and the
//! late filter kept about 29.5 for the 750 K calls between the last two, 1.5 ms of a 110 ms
//! run. Replayed on the 31 sequences of three estimates or more in this machine's BT and IS
//! profiles, against the next estimate of each (weighted by the calls until it), no variant
//! tried did better than 2 %: that one, the same without the warm-up estimate in the drift's
//! sums only, or a three-sigma gate holding an estimate until the next confirms it (17 % worse).
//!
//! Taking the lower of an estimate and the one before it instead let one noisy estimate decide:
//! on NPB BT, `flux_jacobian`'s 7 M calls were compensated at 5.5 ± 12.3 ns after estimates of
//! 15.4 ± 1.5 and 11.9 ± 1.9 ns, which left about 60 ms of probe cost in `main` (+13 %).

/// The cost after the last of `(mean, standard error)` estimates, in the order they were made,
/// and its standard error; `None` without estimates. Takes an iterator it can run three times,
/// so that it allocates nothing (it runs inside a probe, at a window boundary).
pub fn pool<I>(estimates: I) -> Option<(f64, f64)>
where
    I: Iterator<Item = (f64, f64)> + Clone,
{
    let drift = between_variance(estimates.clone())?;
    let mut walk = estimates.map(|(m, se)| (m, variance(se)));
    let (mut cost, mut uncertainty) = walk.next()?;
    for (mean, noise) in walk {
        let prior = uncertainty + drift;
        let gain = prior / (prior + noise);
        cost += gain * (mean - cost);
        uncertainty = (1.0 - gain) * prior;
    }
    Some((cost, uncertainty.sqrt()))
}

/// The random-effects mean of `(mean, standard error)` measurements of one quantity and its
/// standard error, order aside: each weighed by the inverse of its variance plus the variance
/// between them beyond their own errors (`between_variance`); `None` without any. One far-off
/// measurement with a wide error moves it little, where a plain mean took a share of it: next
/// to NPB's randlc one estimation's inline-less-counted read 8.3 ±8.2 ns among a dozen of
/// 0.00 to 0.07 ±0.02, and the plain mean of the run said 0.7.
pub(crate) fn random_effects<I>(measurements: I) -> Option<(f64, f64)>
where
    I: Iterator<Item = (f64, f64)> + Clone,
{
    let between = between_variance(measurements.clone())?;
    let (sum, weights) = measurements.fold((0.0, 0.0), |(sum, weights), (m, se)| {
        let weight = 1.0 / (variance(se) + between);
        (sum + weight * m, weights + weight)
    });
    Some((sum / weights, weights.sqrt().recip()))
}

/// DerSimonian and Laird's τ²: the variance between estimates beyond their own errors; `None`
/// without estimates.
pub(crate) fn between_variance<I>(estimates: I) -> Option<f64>
where
    I: Iterator<Item = (f64, f64)> + Clone,
{
    let (sum, weights) = estimates.clone().fold((0.0, 0.0), |(s, ws), (m, se)| {
        let w = 1.0 / variance(se);
        (s + w * m, ws + w)
    });
    if weights <= 0.0 {
        return None;
    }
    let mean = sum / weights;
    let (k, q, squares) = estimates.fold((0.0, 0.0, 0.0), |(k, q, squares), (m, se)| {
        let w = 1.0 / variance(se);
        (k + 1.0, q + w * (m - mean).powi(2), squares + w * w)
    });
    let c = weights - squares / weights;
    Some(if c > 0.0 { ((q - (k - 1.0)) / c).max(0.0) } else { 0.0 })
}

fn variance(se: f64) -> f64 {
    se.max(MIN_SE).powi(2)
}

/// A floor under a standard error (in the runtime's scaled ticks, `overhead::SCALE`: a 65536th
/// of a clock tick), so that an estimate whose windows all agreed exactly does not take an
/// infinite weight.
const MIN_SE: f64 = 1.0;

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() < tolerance
    }

    /// Estimates in ns as the runtime holds them (scaled ticks: thousands per ns), and back.
    fn pool_ns(estimates: &[(f64, f64)]) -> (f64, f64) {
        let (mean, se) = pool(estimates.iter().map(|&(m, se)| (m * 1e3, se * 1e3))).unwrap();
        (mean / 1e3, se / 1e3)
    }

    #[test]
    fn one_estimate_is_itself() {
        assert_eq!(pool([(15.0, 2.0)].into_iter()), Some((15.0, 2.0)));
        assert_eq!(pool(std::iter::empty()), None);
    }

    #[test]
    fn agreeing_estimates_pool_by_their_precision() {
        let (mean, se) = pool([(10.0, 1.0), (11.0, 1.0)].into_iter()).unwrap();
        assert!(close(mean, 10.5, 1e-9) && close(se, 0.5f64.sqrt(), 1e-9), "{mean} {se}");
        let (mean, _) = pool([(10.0, 1.0), (12.0, 2.0)].into_iter()).unwrap();
        assert!(close(mean, 10.4, 1e-9), "{mean}");
    }

    #[test]
    fn a_noisy_low_estimate_moves_the_cost_little() {
        // BT.W flux_jacobian's five estimates (ns), in the order they were made.
        let estimates = [(17.4, 14.3), (15.4, 1.5), (11.9, 1.9), (5.5, 12.3), (25.4, 6.1)];
        let (mean, se) = pool_ns(&estimates);
        assert!(mean > 12.0 && mean < 17.0, "{mean}");
        assert!(se > 1.0 && se < 4.0, "{se}");
    }

    #[test]
    fn precise_estimates_that_disagree_follow_the_latest() {
        // IS.W randlc: a warm-up estimate, then the run's cost, precisely.
        let estimates = [(7.3, 0.03), (6.5, 0.01), (6.3, 0.16), (6.4, 0.1)];
        let (mean, _) = pool_ns(&estimates);
        assert!(close(mean, 6.4, 0.1), "{mean}");
    }

    #[test]
    fn a_precise_move_is_followed_at_once() {
        // NPB IS.W randlc in one run: the third estimate moves, and the fourth confirms it.
        let (mean, _) = pool_ns(&[(29.6, 0.07), (30.15, 0.33), (27.24, 0.16)]);
        assert!(close(mean, 27.24, 0.3), "{mean}");
    }

    #[test]
    fn consistent_measurements_pool_by_their_own_errors() {
        let (mean, se) = random_effects([(10.0, 2.0), (11.0, 2.0), (9.0, 2.0)].into_iter()).unwrap();
        assert!(close(mean, 10.0, 1e-9) && close(se, 2.0 / 3f64.sqrt(), 1e-9), "{mean} {se}");
        assert_eq!(random_effects(std::iter::empty()), None);
    }

    #[test]
    fn measurements_spread_beyond_their_errors_widen_the_pool() {
        // Two stretches of a run: about +25 with errors of 6, about zero with errors of 5 (BT).
        let items =
            [(24.0, 6.0), (27.0, 6.0), (-4.0, 5.0), (0.0, 5.0), (-2.0, 5.0), (26.0, 6.0), (-1.0, 5.0)];
        let weights: f64 = items.iter().map(|(_, se)| se * se).map(f64::recip).sum();
        let fixed = items.iter().map(|(m, se)| m / (se * se)).sum::<f64>() / weights;
        let fixed_se = weights.sqrt().recip();
        assert!(fixed > 2.0 * fixed_se, "with their own errors only: {fixed} ±{fixed_se}");
        let (mean, se) = random_effects(items.into_iter()).unwrap();
        assert!(se > 2.0 * fixed_se && mean < 2.0 * se, "{mean} ±{se}");
    }

    #[test]
    fn one_far_off_wide_measurement_moves_the_mean_little() {
        // randlc's inline-less-counted (ns): a dozen near zero, one 8.3 ±8.2.
        let mut items = vec![(0.03, 0.02); 12];
        items.push((8.3, 8.2));
        let (mean, _) = random_effects(items.iter().map(|&(m, se)| (m * 1e3, se * 1e3))).unwrap();
        assert!(mean < 0.05e3, "{mean}");
        let plain = items.iter().map(|(m, _)| m).sum::<f64>() / items.len() as f64;
        assert!(plain > 0.6, "the plain mean takes a share of it: {plain}");
    }
}
