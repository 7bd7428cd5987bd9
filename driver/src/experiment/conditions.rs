//! The conditions an experiment's trials are measured under (placement, compensation strategy,
//! callpath depth, throttling, loop alignment), kept beside the trials' cache. An interrupted run
//! resumes from its cache; a run with other conditions must not, or it would pool trials that
//! measure different things, so it stops with a one-line error instead.

use anyhow::{bail, Context, Result};
use std::path::Path;

const FILE: &str = "conditions.txt";

/// The conditions as the file holds them: one `name=value` per line.
pub fn describe(
    placement: &str,
    compensate: &str,
    callpath: &str,
    throttle: bool,
    align_loops: u32,
) -> String {
    let throttle = if throttle { "on" } else { "off" };
    format!(
        "placement={placement}\ncompensate={compensate}\ncallpath={callpath}\nthrottle={throttle}\nalign_loops={align_loops}\n"
    )
}

/// Checks `conditions` against those `out`'s cached trials were measured under, and records
/// them for the next run. `cached` says whether `out` holds trials already.
pub fn check(out: &Path, conditions: &str, cached: bool) -> Result<()> {
    let path = out.join(FILE);
    match std::fs::read_to_string(&path) {
        Ok(recorded) if cached && recorded != conditions => {
            let differ: Vec<&str> =
                conditions.lines().filter(|l| !recorded.lines().any(|r| r == *l)).collect();
            bail!(
                "{} holds trials measured under other conditions (this run: {}); give another --out, or remove it",
                out.display(),
                differ.join(", ")
            );
        }
        _ => std::fs::write(&path, conditions).with_context(|| format!("cannot write {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trials_of_other_conditions_are_not_resumed() {
        let dir = tempfile::tempdir().unwrap();
        let off = describe("early", "on", "all", false, 64);
        let on = describe("early", "on", "all", true, 64);
        check(dir.path(), &off, false).unwrap();
        check(dir.path(), &off, true).unwrap();
        let error = check(dir.path(), &on, true).unwrap_err().to_string();
        assert!(error.contains("throttle=on") && !error.contains("placement"), "{error}");
        check(dir.path(), &on, false).expect("no trials yet: the new conditions are recorded");
        check(dir.path(), &on, true).unwrap();
    }
}
