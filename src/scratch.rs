//! Per-thread buffers reused across calls, so that the marshal path makes
//! no allocation once warm.

use std::cell::RefCell;
use std::thread::LocalKey;

/// Runs `f` with this thread's buffer in `key`. A re-entrant call (a
/// callback that marshals while a marshal is running on the same thread)
/// gets a fresh buffer instead of the busy one.
pub(crate) fn with_buffer<T: Default, R>(
    key: &'static LocalKey<RefCell<T>>,
    f: impl FnOnce(&mut T) -> R,
) -> R {
    key.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffer) => f(&mut buffer),
        Err(_) => f(&mut T::default()),
    })
}
