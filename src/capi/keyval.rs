//! The library's `MPI_Type_free_keyval`, which MPI programs call in place
//! of MPI's own: it forgets the keyval's marshalling registration, then
//! frees it with `PMPI_Type_free_keyval`. MPI offers no way to ask whether
//! a keyval was freed, and reuses its number for the next one, whose
//! attributes would otherwise go through the freed keyval's callbacks.
//!
//! Defined in Rust, not in the C shim, so that the shared library exports
//! it (a cdylib exports Rust `#[no_mangle]` functions only); programs link
//! this library before the MPI library, the usual order, for it to take
//! effect. It is not in the C header: `mpi.h` declares it.

use super::panic::{boundary, OnError};
use super::ptr;
use crate::marshal::attributes;
use crate::mpi;
use std::os::raw::c_int;

/// Forgets `*keyval`'s marshalling registration, then frees it as
/// `MPI_Type_free_keyval` does and returns what MPI returns.
///
/// # Safety
/// `keyval` is NULL or points to the caller's keyval, as for
/// `MPI_Type_free_keyval`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_free_keyval(keyval: *mut c_int) -> c_int {
    // Held, when there is a keyval to forget, until it is freed: no marshal
    // then asks MPI about it in between (MPI would raise an error, fatal by
    // default).
    let _probes;
    // SAFETY: a non-null keyval points to the caller's keyval (the
    // contract above); the reference ends with the copy.
    if let Some(&mut k) = unsafe { ptr::nullable(keyval) } {
        _probes = attributes::hold_probes();
        // Through the boundary so that a panic stops here, quietly: the
        // keyval is freed all the same, and the caller gets MPI's code,
        // as from MPI's own function (which raised any error once).
        boundary(OnError::Return, || {
            attributes::forget(k);
            Ok(())
        });
    }
    // SAFETY: the caller's pointer is passed on to MPI unchanged (MPI
    // reports a NULL one).
    unsafe { mpi::keyval::pmpi_free_keyval(keyval) }
}
