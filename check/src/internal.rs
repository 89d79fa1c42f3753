//! The checker's own calls into the type exchange reach MPI through the
//! checker's wrappers: the marshalling library is linked into
//! `libmpix_check` and calls `MPI_*`, which resolve to the wrappers. While
//! such a call runs on a thread, the wrappers check nothing, set nothing
//! up, and pass straight to MPI (else the exchange's own duplicates got
//! checker state, and its settling barrier was checked as a user's).

use std::cell::Cell;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Whether this thread is inside one of the checker's own calls.
pub fn active() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

/// Runs `f` as one of the checker's own calls.
pub fn within<R>(f: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            DEPTH.with(|d| d.set(d.get() - 1));
        }
    }
    DEPTH.with(|d| d.set(d.get() + 1));
    let _leave = Leave;
    f()
}
