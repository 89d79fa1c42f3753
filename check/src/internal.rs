//! The checker's own calls into the type exchange, and the library's own
//! operations the program calls (the exchange's set-up, messages and
//! frees), reach MPI through the checker's wrappers: the marshalling
//! library is linked into `libmpix_check` and calls `MPI_*`, which resolve
//! to the wrappers. While such a call runs on a thread, the wrappers check
//! nothing, set nothing up, and pass straight to MPI (else the exchange's
//! own duplicates got checker state, its settling barrier was checked as a
//! user's, and the checker's set-up of a duplicate's channel re-entered
//! the exchange's set-up lock: a deadlock). The library keeps the one
//! per-thread flag; the checker marks its own calls with it too.

/// Whether this thread is inside one of the checker's own calls or one of
/// the library's own operations.
pub fn active() -> bool {
    mpix_marshal::in_library_operation()
}

/// Runs `f` as one of the checker's own calls.
pub fn within<R>(f: impl FnOnce() -> R) -> R {
    mpix_marshal::as_library_operation(f)
}
