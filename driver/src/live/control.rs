//! Switching probes from outside. On is immediate: the event becomes `MODE_LENIENT`, measured
//! from its next call, its exits tolerant of activations that began switched off. Off goes
//! through `MODE_COUNTED` (calls still counted, no timing, no frames) and becomes `MODE_OFF`
//! once no activation of the event is open on any thread, so that no exit is ever lost.

use super::segment::Segment;
use super::snapshot::Snapshot;
use instrument_live::{EventName, MODE_COUNTED, MODE_LENIENT, MODE_OFF};
use std::collections::BTreeMap;

/// Time after the switch to counted before an event may go off: an entry that read the old
/// mode just before the switch has pushed its frame by then.
const SETTLE_NS: u64 = 20_000_000;

/// The events `pattern` names: routines by readable or linked name (with `*` and `?`), with
/// their loops and call statements; or one loop or call statement by its display name
/// (`labels`, from `display_names`).
pub fn matching(names: &[EventName], labels: &[Option<String>], pattern: &str) -> Vec<u32> {
    let glob = wildmatch::WildMatch::new(pattern);
    let mut ids: Vec<u32> = Vec::new();
    for (id, event) in names.iter().enumerate() {
        let linked = match event {
            EventName::Function { name, .. } => Some(name.as_str()),
            _ => None,
        };
        let label = labels.get(id).and_then(Option::as_deref);
        if label.is_some_and(|l| glob.matches(l)) || linked.is_some_and(|l| glob.matches(l)) {
            ids.push(id as u32);
            if linked.is_some() {
                ids.extend(contained(names, id as u32));
            }
        }
    }
    ids.sort_unstable();
    ids.dedup();
    ids
}

fn contained(names: &[EventName], routine: u32) -> impl Iterator<Item = u32> + '_ {
    names.iter().enumerate().filter_map(move |(id, event)| match event {
        EventName::Loop { function, .. } | EventName::CallSite { function, .. } if *function == routine => {
            Some(id as u32)
        }
        _ => None,
    })
}

/// Events on their way off: when they were switched to counted.
#[derive(Default)]
pub struct Switcher {
    pending: BTreeMap<u32, u64>,
}

impl Switcher {
    pub fn off(&mut self, segment: &Segment, ids: &[u32], now_ns: u64) {
        for &id in ids {
            segment.set_mode(id, MODE_COUNTED);
            self.pending.insert(id, now_ns);
        }
    }

    pub fn on(&mut self, segment: &Segment, ids: &[u32]) {
        for &id in ids {
            self.pending.remove(&id);
            segment.set_mode(id, MODE_LENIENT);
        }
    }

    /// Switches off the pending events that have no open activation in `snapshot`. Returns how
    /// many are still pending.
    pub fn settle(&mut self, segment: &Segment, snapshot: &Snapshot) -> usize {
        self.pending.retain(|&id, &mut switched| {
            let open = snapshot.totals.get(id as usize).map_or(0, |t| t.open);
            let done = snapshot.at_ns >= switched + SETTLE_NS && open == 0;
            if done {
                segment.set_mode(id, MODE_OFF);
            }
            !done
        });
        self.pending.len()
    }

    pub fn pending(&self) -> impl Iterator<Item = u32> + '_ {
        self.pending.keys().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<EventName> {
        vec![
            EventName::Function { name: "main".into(), file: "a.c".into(), line: 1 },
            EventName::Function { name: "work_step".into(), file: "a.c".into(), line: 5 },
            EventName::Loop { function: 1, file: "a.c".into(), line: 6 },
            EventName::CallSite { function: 1, callee: "sqrt".into(), file: "a.c".into(), line: 7 },
            EventName::Hidden,
        ]
    }

    #[test]
    fn a_routine_brings_its_loops_and_call_statements() {
        let (names, labels) = (names(), super::super::labels::display_names(&names()));
        assert_eq!(matching(&names, &labels, "work_*"), [1, 2, 3]);
        assert_eq!(matching(&names, &labels, "main"), [0]);
        assert_eq!(matching(&names, &labels, "loop at a.c:6 in work_step"), [2]);
        assert!(matching(&names, &labels, "nothing").is_empty());
    }
}
