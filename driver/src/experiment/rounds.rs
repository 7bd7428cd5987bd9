//! Rounds: the unit the runner schedules, caches and resumes. In round r every level of a
//! program runs once, back to back, in an order drawn afresh for that round (a fixed seed per
//! program and round, so a rerun draws the same order), so that no level always runs first or
//! always follows the same neighbour. A round is only useful whole (its levels are compared with
//! each other), so an interrupted round is dropped from the cache and run again in full.

use super::results::{Level, Trial};
use std::collections::{BTreeMap, BTreeSet};

/// The order in which `levels` run in `round` of `program`: a permutation, fresh each round.
pub fn order(program: &str, round: u32, levels: &[Level]) -> Vec<Level> {
    let name_hash =
        program.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    let mut rng = fastrand::Rng::with_seed(name_hash ^ (round as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut order = levels.to_vec();
    rng.shuffle(&mut order);
    order
}

/// The rounds of each program that hold a trial (measured or failed) of every level.
pub fn complete(trials: &[Trial], levels: &[Level]) -> BTreeSet<(String, u32)> {
    let mut seen: BTreeMap<(String, u32), BTreeSet<Level>> = BTreeMap::new();
    for t in trials {
        seen.entry((t.program.clone(), t.trial)).or_default().insert(t.level);
    }
    seen.into_iter().filter(|(_, have)| levels.iter().all(|l| have.contains(l))).map(|(key, _)| key).collect()
}

/// Keeps the trials of complete rounds only; returns how many were dropped.
pub fn drop_partial(trials: &mut Vec<Trial>, levels: &[Level]) -> usize {
    let whole = complete(trials, levels);
    let before = trials.len();
    trials.retain(|t| whole.contains(&(t.program.clone(), t.trial)));
    before - trials.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(program: &str, level: Level, round: u32) -> Trial {
        Trial {
            program: program.into(),
            level,
            trial: round,
            main_ns: Some(1.0),
            ranks_ns: Vec::new(),
            error: None,
            control_ns: None,
        }
    }

    #[test]
    fn every_round_is_a_permutation_and_orders_vary() {
        let levels = Level::ALL.to_vec();
        let mut orders = BTreeSet::new();
        for round in 0..20 {
            let mut o = order("IS.W", round, &levels);
            orders.insert(o.clone());
            o.sort();
            assert_eq!(o, levels, "round {round} runs every level once");
        }
        assert!(orders.len() > 10, "fresh orders: {}", orders.len());
        assert_eq!(order("IS.W", 3, &levels), order("IS.W", 3, &levels), "reproducible");
    }

    #[test]
    fn resuming_keeps_rounds_whole() {
        let levels = [Level::Mo, Level::Pa];
        let mut trials = vec![
            trial("a", Level::Mo, 0),
            trial("a", Level::Pa, 0),
            trial("a", Level::Pa, 1), // round 1 of a was interrupted before MO
            trial("b", Level::Mo, 0),
            Trial { error: Some("crashed".into()), main_ns: None, ..trial("b", Level::Pa, 0) },
        ];
        assert_eq!(drop_partial(&mut trials, &levels), 1);
        let kept: Vec<(&str, u32)> = trials.iter().map(|t| (t.program.as_str(), t.trial)).collect();
        assert_eq!(kept, [("a", 0), ("a", 0), ("b", 0), ("b", 0)], "a failed trial completes its round");
        let whole = complete(&trials, &levels);
        assert!(whole.contains(&("a".into(), 0)) && !whole.contains(&("a".into(), 1)));
    }
}
