//! Datatype keyvals: the one the per-type cache keeps its entries under,
//! created once and freed at MPI_Finalize, and the PMPI keyval free that
//! bypasses this library's own `MPI_Type_free_keyval` wrapper.

use super::{Datatype, MPI_SUCCESS};
use std::os::raw::{c_int, c_void};
use std::sync::OnceLock;

/// `MPI_Type_copy_attr_function`.
pub type CopyFn = unsafe extern "C" fn(
    Datatype,
    c_int,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_int,
) -> c_int;
/// `MPI_Type_delete_attr_function`.
pub type DeleteFn = unsafe extern "C" fn(Datatype, c_int, *mut c_void, *mut c_void) -> c_int;

/// The cache's keyval, created on first use; None if MPI refused one.
static CACHE_KEYVAL: OnceLock<Option<c_int>> = OnceLock::new();

/// The cache's keyval, created with `copy` and `delete` on the first call
/// (later calls return it as it is).
pub fn cache_keyval(copy: CopyFn, delete: DeleteFn) -> Option<c_int> {
    *CACHE_KEYVAL.get_or_init(|| {
        let mut k: c_int = 0;
        // SAFETY: the callbacks have MPI's signatures; k is a valid
        // out-pointer; no extra state is passed.
        let rc = unsafe {
            crate::mpi::sys::MPI_Type_create_keyval(
                Some(copy),
                Some(delete),
                &mut k,
                std::ptr::null_mut(),
            )
        };
        (rc == MPI_SUCCESS).then_some(k)
    })
}

/// Called from MPI_Finalize (the hook `is_initialized` registers): frees
/// the cache's keyval, which MPI then releases with the last type that
/// carries it.
pub(super) extern "C" fn release_cache_keyval() {
    if let Some(Some(mut k)) = CACHE_KEYVAL.get().copied() {
        // SAFETY: k is the cache's keyval, freed once, through PMPI.
        unsafe { pmpi_free_keyval(&mut k) };
    }
}

/// `PMPI_Type_free_keyval`: frees a keyval without going through this
/// library's `MPI_Type_free_keyval` wrapper; MPI's return code.
///
/// # Safety
/// `keyval` is NULL or points to a keyval, as for `MPI_Type_free_keyval`.
pub unsafe fn pmpi_free_keyval(keyval: *mut c_int) -> c_int {
    // SAFETY: the caller's pointer is passed on unchanged (MPI reports a
    // NULL one).
    unsafe { super::shim::mpixm_pmpi_type_free_keyval(keyval) }
}
