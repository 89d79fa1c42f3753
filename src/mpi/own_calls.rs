//! Which MPI calls the library makes on its own behalf. The type exchange
//! duplicates the user's communicator, sends on its duplicates and frees
//! them; a PMPI tool loaded with the library (mpix-check) sees those calls
//! as the program's unless it can tell them apart. While a thread runs one
//! of the library's own operations, [`active`] is true, and such a tool
//! passes the calls straight to MPI: else its wrapper of `MPI_Comm_dup`
//! would set up state for the exchange's duplicate while the exchange
//! still holds its set-up lock (a deadlock), and it would check the
//! exchange's private messages as the program's.
//!
//! One call is the program's all the same: the duplication of the user's
//! communicator in the exchange's first call on it, which makes that call
//! collective. It runs as a [`collective_point`]: [`active`] is false, and
//! [`exposed`] names the operation, so that a tool checks it as a
//! collective of the program's, under the name the program used.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How many operations and collective points are running on all threads:
/// while none is, [`active`] and [`exposed`] answer without reading the
/// thread-local state (a tool asks on every call it wraps, and a
/// thread-local read in a shared library is a function call).
static INSIDE: AtomicUsize = AtomicUsize::new(0);

#[inline]
fn nobody_inside() -> bool {
    // Relaxed: a thread's own entries are seen by itself in program order;
    // others' only make this thread read its own state.
    INSIDE.load(Ordering::Relaxed) == 0
}

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The outermost operation's name (`MPIX_Type_send`, …), if named.
    static OPERATION: Cell<Option<&'static str>> = const { Cell::new(None) };
    static EXPOSED: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is inside one of the library's own operations, and
/// not at one of its collective points.
#[inline]
pub fn active() -> bool {
    if nobody_inside() {
        return false;
    }
    DEPTH.with(|d| d.get() > 0) && !EXPOSED.with(|e| e.get())
}

/// At a collective point: the operation the program called.
#[inline]
pub fn exposed() -> Option<&'static str> {
    if nobody_inside() {
        return None;
    }
    if EXPOSED.with(|e| e.get()) {
        OPERATION.with(|o| o.get()).or(Some("a type exchange call"))
    } else {
        None
    }
}

/// Runs `f` as one of the library's own operations (nests).
pub fn within<R>(f: impl FnOnce() -> R) -> R {
    let _enter = Enter::new(None);
    f()
}

/// Runs `f` as the library's operation `name`, which the program called.
pub fn operation<R>(name: &'static str, f: impl FnOnce() -> R) -> R {
    let _enter = Enter::new(Some(name));
    f()
}

/// Runs `f`, a collective call on the program's own communicator inside
/// an operation, as the program's (see the module's documentation).
pub fn collective_point<R>(f: impl FnOnce() -> R) -> R {
    struct Leave(bool);
    impl Drop for Leave {
        fn drop(&mut self) {
            EXPOSED.with(|e| e.set(self.0));
            INSIDE.fetch_sub(1, Ordering::Relaxed);
        }
    }
    INSIDE.fetch_add(1, Ordering::Relaxed);
    let _leave = Leave(EXPOSED.with(|e| e.replace(true)));
    f()
}

/// One level of nesting, undone when dropped (also on unwinding).
struct Enter(Option<&'static str>);

impl Enter {
    fn new(name: Option<&'static str>) -> Enter {
        INSIDE.fetch_add(1, Ordering::Relaxed);
        let outer = OPERATION.with(|o| o.get());
        if DEPTH.with(|d| d.replace(d.get() + 1)) == 0 {
            OPERATION.with(|o| o.set(name));
        }
        Enter(outer)
    }
}

impl Drop for Enter {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
        OPERATION.with(|o| o.set(self.0));
        INSIDE.fetch_sub(1, Ordering::Relaxed);
    }
}
