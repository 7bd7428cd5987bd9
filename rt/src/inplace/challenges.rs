//! What an estimation had spent when each event queued behind it last armed its challenge
//! (`offers::challenge_after`): a throttled event waiting in the queue that then has as many
//! counted calls as an estimation may spend challenges the one under way, which is given up
//! when it spent under half its budget meanwhile (`give_up_idle`). One mark for the estimation
//! (the last challenger's) was not enough: several queued events challenge in turn, each reset
//! the mark the one before had set, and none ever found its own: on SQLite's shell, callpaths on,
//! an estimation of a sorter routine whose phase was over held the queue for 118 ms while seven
//! events challenged it about 150 times in turn (five of them estimated long before, which kept
//! challenging: `offers::overtake` now re-arms only an event still queued; issue 23, session 56).

use super::NONE;

/// The challengers remembered at once; a later one replaces the oldest.
const SLOTS: usize = 8;

/// The marks of the estimation under way, owned with its windows.
#[derive(Clone, Copy)]
pub(super) struct Challenges {
    ids: [u32; SLOTS],
    spent: [u64; SLOTS],
    next: usize,
}

impl Challenges {
    /// No marks: a new estimation's.
    pub(super) const EMPTY: Challenges = Challenges { ids: [NONE; SLOTS], spent: [0; SLOTS], next: 0 };

    /// Event `id` armed its challenge when the estimation had spent `spent`.
    pub(super) fn mark(&mut self, id: u32, spent: u64) {
        let slot = self.ids.iter().position(|&i| i == id).unwrap_or_else(|| {
            let slot = self.next;
            self.next = (self.next + 1) % SLOTS;
            slot
        });
        (self.ids[slot], self.spent[slot]) = (id, spent);
    }

    /// What the estimation had spent when event `id` armed its challenge, if it did under it.
    pub(super) fn spent_at(&self, id: u32) -> Option<u64> {
        self.ids.iter().position(|&i| i == id).map(|slot| self.spent[slot])
    }
}

#[cfg(test)]
mod tests {
    use super::Challenges;

    #[test]
    fn each_challenger_keeps_its_own_mark_while_others_challenge_in_turn() {
        let mut c = Challenges::EMPTY;
        c.mark(7, 10);
        c.mark(8, 20);
        c.mark(7, 30);
        assert_eq!((c.spent_at(7), c.spent_at(8), c.spent_at(9)), (Some(30), Some(20), None));
    }

    #[test]
    fn a_new_challenger_replaces_the_oldest_when_all_slots_are_taken() {
        let mut c = Challenges::EMPTY;
        for id in 0..9 {
            c.mark(id, u64::from(id));
        }
        assert_eq!((c.spent_at(0), c.spent_at(1), c.spent_at(8)), (None, Some(1), Some(8)));
    }
}
