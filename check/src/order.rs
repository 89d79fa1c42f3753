//! The order of blocking collective calls across communicators, in the
//! batched mode (pure data: no MPI).
//!
//! MPI may make any blocking collective call wait for every rank of its
//! communicator, so a correct program makes the calls of two communicators
//! in the same relative order on every rank the two share (MPI-4.1 §6.14:
//! "whether collective communications are synchronizing or not"). Two
//! communicators used in opposite orders (the paper's §5 example) hang
//! when MPI synchronizes and pass when it does not; the immediate mode's
//! check synchronizes, so it finds them by the hang it causes. The batched
//! mode does not, so it compares the order itself: each blocking call on a
//! communicator C carries the number of blocking calls the rank made
//! before it on the communicators whose group holds all of C's ranks
//! (C's own calls aside), and every rank of C must carry the same number.
//! Only such wider communicators are counted, because every rank of C has
//! a count for them. A rank that made a call of a wider communicator D
//! before C's call k where another made it after is counted one more: the
//! two differ at C's call k. Counting is exact for a correct program
//! (each wider call is before C's call k on every rank or after it on
//! every rank), so a correct program is never reported.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A communicator's part in the order: the count of its blocking calls,
/// and the counts of the communicators whose group holds its ranks.
pub struct Order {
    own: Arc<Count>,
    wider: Mutex<Wider>,
    /// An order finding was reported on the communicator: its calls'
    /// places are compared no more (the ranks stay apart by the calls one
    /// made and another did not: every later call would be reported).
    retired: AtomicBool,
}

/// A communicator's count of blocking collective calls, with its handle
/// bits and the name it had when it was first counted (for a report made
/// after it is freed).
pub struct Count {
    calls: AtomicU64,
    pub comm: u64,
    pub name: String,
}

/// A communicator's wider communicators' counts: the live ones, and the
/// calls of those freed (their counts stay part of the sum).
#[derive(Default)]
struct Wider {
    counts: Vec<Arc<Count>>,
    gone: u64,
}

/// The communicators being counted, by their sorted world ranks.
type Live = Vec<(Box<[usize]>, Weak<Order>)>;

fn live() -> &'static Mutex<Live> {
    static LIVE: Mutex<Live> = Mutex::new(Vec::new());
    &LIVE
}

/// Whether every element of `small` is in `big` (both sorted).
fn holds(big: &[usize], small: &[usize]) -> bool {
    small.len() <= big.len() && small.iter().all(|r| big.binary_search(r).is_ok())
}

impl Order {
    /// A new communicator's part, linked to the communicators counted so
    /// far: those whose group holds its ranks are its wider ones, and it
    /// is a wider one of those whose ranks it holds. `world_ranks`: its
    /// ranks' world ranks, in any order.
    pub fn join(comm: u64, name: String, mut world_ranks: Vec<usize>) -> Arc<Order> {
        world_ranks.sort_unstable();
        world_ranks.dedup();
        let me = Arc::new(Order {
            own: Arc::new(Count {
                calls: AtomicU64::new(0),
                comm,
                name,
            }),
            wider: Mutex::new(Wider::default()),
            retired: AtomicBool::new(false),
        });
        let mut all = lock(live());
        all.retain(|(_, o)| o.strong_count() > 0);
        for (ranks, other) in all.iter() {
            let Some(other) = other.upgrade() else {
                continue;
            };
            if holds(ranks, &world_ranks) {
                lock(&me.wider).counts.push(other.own.clone());
            }
            if holds(&world_ranks, ranks) {
                lock(&other.wider).counts.push(me.own.clone());
            }
        }
        all.push((world_ranks.into_boxed_slice(), Arc::downgrade(&me)));
        me
    }

    /// A blocking call on the communicator: the number of blocking calls
    /// made before it on its wider communicators. Counts the call.
    pub fn next(&self) -> u64 {
        if self.retired.load(Ordering::Relaxed) {
            self.own.calls.fetch_add(1, Ordering::Relaxed);
            return 0;
        }
        let wider = lock(&self.wider);
        let before = wider
            .counts
            .iter()
            .map(|c| c.calls.load(Ordering::Relaxed))
            .fold(wider.gone, u64::wrapping_add);
        drop(wider);
        self.own.calls.fetch_add(1, Ordering::Relaxed);
        before
    }

    /// The wider communicators, for a report: their handle bits and the
    /// names they had when first counted.
    pub fn wider(&self) -> Vec<(u64, String)> {
        lock(&self.wider)
            .counts
            .iter()
            .map(|c| (c.comm, c.name.clone()))
            .collect()
    }

    /// The communicator is freed: off the list, and its count, final,
    /// moved into the sums of the communicators it was a wider one of (so
    /// that a program making and freeing duplicates in a loop keeps each
    /// call's sum short).
    pub fn leave(&self) {
        let mut all = lock(live());
        all.retain(|(_, o)| o.strong_count() > 0 && !std::ptr::eq(o.as_ptr(), self));
        let calls = self.own.calls.load(Ordering::Relaxed);
        for other in all.iter().filter_map(|(_, o)| o.upgrade()) {
            let mut w = lock(&other.wider);
            let before = w.counts.len();
            w.counts.retain(|c| !Arc::ptr_eq(c, &self.own));
            if w.counts.len() < before {
                w.gone = w.gone.wrapping_add(calls);
            }
        }
    }
}

/// The order of the communicator whose handle bits are `comm`, if it is
/// counted.
fn of(comm: u64) -> Option<Arc<Order>> {
    lock(live())
        .iter()
        .filter_map(|(_, o)| o.upgrade())
        .find(|o| o.own.comm == comm)
}

/// The wider communicators of `comm` (`Order::wider`), for a report.
pub fn wider_of(comm: u64) -> Vec<(u64, String)> {
    of(comm).map(|o| o.wider()).unwrap_or_default()
}

/// An order finding on `comm` was reported: its places are compared no
/// more. Every rank sees the same finding, so all retire it at the same
/// call.
pub fn retire(comm: u64) {
    if let Some(o) = of(comm) {
        o.retired.store(true, Ordering::Relaxed);
    }
}

/// Whether `comm`'s places are compared no more (`retire`): the records
/// of its calls recorded before are read as if they agreed.
pub fn retired(comm: u64) -> bool {
    of(comm).is_some_and(|o| o.retired.load(Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two communicators of one group used in opposite orders by two
    /// ranks (each rank's own counts, as two processes would have them):
    /// their first calls carry different numbers; the same order carries
    /// the same.
    #[test]
    fn opposite_orders_differ_and_the_same_order_agrees() {
        // One rank's view of comm 1 and comm 2 over world ranks 100 and
        // 101 (ranks no other test uses: the registry is the process's);
        // each run is a fresh pair, the last run's gone.
        let run = |first_c1: bool| {
            let c1 = Order::join(1, "c1".into(), vec![101, 100]);
            let c2 = Order::join(2, "c2".into(), vec![100, 101]);
            let (a, b) = if first_c1 { (&c1, &c2) } else { (&c2, &c1) };
            let n_a = a.next();
            let n_b = b.next();
            // The number c1's first call carried.
            if first_c1 {
                n_a
            } else {
                n_b
            }
        };
        assert_eq!(run(true), 0);
        assert_eq!(run(false), 1);
    }

    /// A narrower communicator counts the wider one's calls; the wider
    /// one does not count the narrower's.
    #[test]
    fn only_wider_communicators_count() {
        let world = Order::join(10, "w".into(), vec![0, 1, 2, 3]);
        let half = Order::join(11, "h".into(), vec![0, 1]);
        assert_eq!(world.next(), 0);
        assert_eq!(half.next(), 1);
        assert_eq!(world.next(), 0);
        assert_eq!(half.next(), 2);
        assert_eq!(half.wider().len(), 1);
        assert!(world.wider().iter().all(|(c, _)| *c != 11));
    }

    /// A freed wider communicator's calls stay in the sum, off the list.
    #[test]
    fn a_freed_wider_communicator_still_counts() {
        let world = Order::join(20, "w".into(), vec![200, 201]);
        let dup = Order::join(21, "d".into(), vec![201, 200]);
        assert_eq!(dup.next(), 0);
        assert_eq!(dup.next(), 0);
        dup.leave();
        drop(dup);
        assert!(world.wider().is_empty());
        assert_eq!(world.next(), 2);
    }
}
