//! The runtime's lock for its cold shared state (merged records, the event registry, the live
//! segment's space). Unlike std's mutex it can be taken over in the process a fatal signal
//! forks to write the profile: a thread that held it at the signal does not exist there, so
//! waiting would hang the writer until it is killed and the profile lost. The writer takes it
//! anyway (`take_over_held_locks`) and writes what it finds, which at worst misses the update
//! that thread was making. Never used on the hot path; held for microseconds, so waiting spins
//! briefly and then yields.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{
    AtomicBool,
    Ordering::{Acquire, Relaxed, Release},
};

/// Set in the signal-time writer: locks held by vanished threads are taken over.
static TAKE_OVER: AtomicBool = AtomicBool::new(false);

/// From now on (in the single-threaded writer process), a held lock is taken over.
pub fn take_over_held_locks() {
    TAKE_OVER.store(true, Relaxed);
}

pub struct Lock<T> {
    held: AtomicBool,
    data: UnsafeCell<T>,
}

// SAFETY: the data is reached only through a guard, and a guard exists for one holder at a
// time (`lock`), except in the writer process where no other thread exists.
unsafe impl<T: Send> Sync for Lock<T> {}

pub struct Guard<'a, T> {
    lock: &'a Lock<T>,
}

impl<T> Lock<T> {
    pub const fn new(data: T) -> Lock<T> {
        Lock { held: AtomicBool::new(false), data: UnsafeCell::new(data) }
    }

    pub fn lock(&self) -> Guard<'_, T> {
        let mut spins = 0u32;
        while self.held.compare_exchange_weak(false, true, Acquire, Relaxed).is_err() {
            if TAKE_OVER.load(Relaxed) {
                break;
            }
            spins += 1;
            if spins < 100 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        Guard { lock: self }
    }
}

impl<T> Deref for Guard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock (or the process has no other thread).
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for Guard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for `deref`; the guard is the only way to the data.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for Guard<'_, T> {
    fn drop(&mut self) {
        self.lock.held.store(false, Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_take_turns() {
        static COUNT: Lock<u64> = Lock::new(0);
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    for _ in 0..10_000 {
                        *COUNT.lock() += 1;
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(*COUNT.lock(), 40_000);
    }
}
