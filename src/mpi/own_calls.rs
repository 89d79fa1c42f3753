//! Which MPI calls the library makes on its own behalf. The type exchange
//! duplicates the user's communicator, sends on its duplicates and frees
//! them; a PMPI tool loaded with the library (mpix-check) sees those calls
//! as the program's unless it can tell them apart. While a thread runs one
//! of the library's own operations, [`active`] is true, and such a tool
//! passes the calls straight to MPI: else its wrapper of `MPI_Comm_dup`
//! would set up state for the exchange's duplicate while the exchange
//! still holds its set-up lock (a deadlock), and it would check the
//! exchange's private messages as the program's.

use std::cell::Cell;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Whether this thread is inside one of the library's own operations.
pub fn active() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

/// Runs `f` as one of the library's own operations (nests).
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
