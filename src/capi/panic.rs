//! The C API's panic boundary: every exported function runs its Rust body
//! through `boundary`, the one place that catches a panic (which must not
//! unwind into C), turns an error into an MPI error code of the classes
//! this library registers, and raises it on `MPI_COMM_SELF`'s error
//! handler, as MPI does for datatype calls, unless the export says not to.

use super::error::{self, ErrorKind, MPI_SUCCESS};
use crate::error::Result;
use crate::mpi::{self, error_class};
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What an export does with an error code besides returning it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OnError {
    /// Raise it on `MPI_COMM_SELF`'s error handler first, as MPI's own
    /// datatype calls do (under the default `MPI_ERRORS_ARE_FATAL` the
    /// process then aborts).
    Raise,
    /// Only return it: for an export that must not raise, because it
    /// answers questions about errors or because MPI raised the error
    /// already.
    Return,
}

/// Runs an export's body: `MPI_SUCCESS` when it succeeds, else the error's
/// code (`ErrorKind::Internal`'s for a panic), raised or not per `on_error`.
pub(super) fn boundary(on_error: OnError, body: impl FnOnce() -> Result<()>) -> c_int {
    // Unwind safety is asserted: after a panic nothing the body captured
    // is used again, and the library's shared state is behind locks whose
    // users all tolerate poisoning.
    let code = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => return MPI_SUCCESS,
        Ok(Err(e)) => error::code_of(&e),
        Err(_) => error::code_for(
            ErrorKind::Internal,
            "a bug in mpix-marshal was caught (a Rust panic)",
        ),
    };
    // Before MPI_Init and after MPI_Finalize there is no handler to call.
    if on_error == OnError::Raise && mpi::is_initialized() {
        // What a handler that returns did is its own business: the code is
        // returned all the same.
        let _ = error_class::call_self_errhandler(code);
    }
    code
}
