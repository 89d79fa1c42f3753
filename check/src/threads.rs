//! The thread level the program runs at, and the one lock that makes the
//! point-to-point checks safe under `MPI_THREAD_MULTIPLE` (issue 29,
//! item 5).
//!
//! The point-to-point checks pair each message with its companion by the
//! order in which one rank posts them, and each receive with its place in
//! its channel's queue by the order in which the receives are posted. Two
//! threads sending on one (communicator, destination, tag) could post
//! their companions in one order and their messages in the other; two
//! threads receiving on one communicator could queue their receives in
//! one order and post them in the other. Either would pair a message with
//! another message's companion (a mismatch reported against the wrong
//! message), and two threads would change one channel's queue at once (a
//! data race). So, at
//! `MPI_THREAD_MULTIPLE` only, each wrapper holds this lock while it
//! posts a companion with its message, or queues a receive with its
//! posting, and while it checks a completed receive against the queue.
//! The lock is never held while a call waits: a blocking call is posted
//! in its nonblocking form under the lock, and waited for after `release`
//! (`crate::hang`'s polled forms). At the other thread levels one thread
//! calls MPI at a time and the lock is not taken.

use std::cell::{RefCell, UnsafeCell};
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

static MULTIPLE: AtomicBool = AtomicBool::new(false);

/// Records the thread level `MPI_Init_thread` provided.
pub fn provided(level: c_int, multiple_level: c_int) {
    MULTIPLE.store(level == multiple_level, Ordering::Relaxed);
}

/// Whether the program runs at `MPI_THREAD_MULTIPLE`.
#[inline]
pub fn multiple() -> bool {
    MULTIPLE.load(Ordering::Relaxed)
}

static LOCK: Mutex<()> = Mutex::new(());

thread_local! {
    /// The lock, while this thread holds it.
    static HELD: RefCell<Option<MutexGuard<'static, ()>>> = const { RefCell::new(None) };
}

/// This thread's hold on the lock, from `enter` to its drop (or to
/// `release`, whichever comes first).
#[must_use]
pub struct Serial(bool);

/// Takes the lock (at `MPI_THREAD_MULTIPLE`, unless this thread holds it
/// already: then the outer hold covers this one).
#[inline]
pub fn enter() -> Serial {
    if !multiple() || HELD.with(|h| h.borrow().is_some()) {
        return Serial(false);
    }
    let g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    HELD.with(|h| *h.borrow_mut() = Some(g));
    Serial(true)
}

impl Drop for Serial {
    #[inline]
    fn drop(&mut self) {
        if self.0 {
            release();
        }
    }
}

/// Lets the lock go before a wait: the operation is posted. A later
/// `enter` on this thread takes it again.
#[inline]
pub fn release() {
    if multiple() {
        let g = HELD.with(|h| h.borrow_mut().take());
        drop(g);
    }
}

/// State the wrappers share on the message path, guarded by the one lock
/// above rather than by a lock of its own: below `MPI_THREAD_MULTIPLE`
/// one thread calls MPI at a time and nothing is taken (a `Mutex` costs
/// two atomic read-modify-writes per use, several times per message).
pub struct Shared<T> {
    value: UnsafeCell<T>,
    busy: AtomicBool,
}

// SAFETY: every access goes through `with`, which holds the lock at
// MPI_THREAD_MULTIPLE; below it, the thread level the program asked for
// lets one thread call MPI (and so the wrappers) at a time.
unsafe impl<T: Send> Sync for Shared<T> {}

impl<T> Shared<T> {
    pub const fn new(value: T) -> Self {
        Shared {
            value: UnsafeCell::new(value),
            busy: AtomicBool::new(false),
        }
    }

    /// Runs `f` on the value, under the lock at `MPI_THREAD_MULTIPLE`.
    /// A nested `with` on one value would be a bug of ours: it panics
    /// (and the process ends) rather than aliasing the value.
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let _s = enter();
        // Plain loads and stores (no read-modify-write): the lock or the
        // thread level already orders the accesses.
        assert!(
            !self.busy.load(Ordering::Relaxed),
            "mpix-check: shared state used while in use"
        );
        self.busy.store(true, Ordering::Relaxed);
        struct Done<'a>(&'a AtomicBool);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Relaxed);
            }
        }
        let _done = Done(&self.busy);
        // SAFETY: the only access now: the lock (or the thread level)
        // excludes other threads, `busy` excludes this thread's nesting.
        f(unsafe { &mut *self.value.get() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_values_are_used_one_at_a_time() {
        static S: Shared<u32> = Shared::new(0);
        S.with(|v| *v += 1);
        assert_eq!(S.with(|v| *v), 1);
        // A nested use of one value is refused, not aliased.
        let nested = std::panic::catch_unwind(|| S.with(|_| S.with(|v| *v)));
        assert!(nested.is_err());
        assert_eq!(S.with(|v| *v), 1, "usable again after the refusal");
    }

    #[test]
    fn nested_holds_and_an_early_release() {
        provided(3, 3);
        let outer = enter();
        assert!(outer.0);
        let inner = enter();
        assert!(!inner.0, "the outer hold covers a nested one");
        drop(inner);
        assert!(HELD.with(|h| h.borrow().is_some()));
        release();
        assert!(LOCK.try_lock().is_ok(), "released before the wait");
        let again = enter();
        assert!(again.0, "taken again after the wait");
        drop(again);
        drop(outer);
        assert!(LOCK.try_lock().is_ok());
        provided(0, 3);
        assert!(!enter().0, "not taken below MPI_THREAD_MULTIPLE");
    }
}
