//! MPI's user-defined error classes and codes, and its error handlers: the
//! calls the C API makes to report errors the way MPI does (a class per
//! kind of error, a code per error whose string is its message, raised on
//! `MPI_COMM_SELF`). Each is a checked, safe wrapper; MPI must be
//! initialized, as for every call of this module's parent.

use super::check;
use crate::error::Result;
use std::ffi::CStr;
use std::os::raw::c_int;

/// `MPI_ERR_OTHER`: the class to report when none of the library's own
/// could be registered.
pub const ERR_OTHER: c_int = crate::mpi::sys::MPI_ERR_OTHER as c_int;

/// A new error class (`MPI_Add_error_class`).
pub fn add_class() -> Result<c_int> {
    let mut class = 0;
    // SAFETY: `class` is a valid out-pointer.
    let rc = unsafe { crate::mpi::sys::MPI_Add_error_class(&mut class) };
    check(rc, "MPI_Add_error_class")?;
    Ok(class)
}

/// A new error code of `class` (`MPI_Add_error_code`).
pub fn add_code(class: c_int) -> Result<c_int> {
    let mut code = 0;
    // SAFETY: `code` is a valid out-pointer.
    let rc = unsafe { crate::mpi::sys::MPI_Add_error_code(class, &mut code) };
    check(rc, "MPI_Add_error_code")?;
    Ok(code)
}

/// Sets the string `MPI_Error_string` gives for a class or code this
/// process added (`MPI_Add_error_string`).
pub fn set_string(code: c_int, text: &CStr) -> Result<()> {
    // SAFETY: `text` is NUL-terminated and MPI copies it before returning.
    let rc = unsafe { crate::mpi::sys::MPI_Add_error_string(code, text.as_ptr()) };
    check(rc, "MPI_Add_error_string")
}

/// The class of an error code (`MPI_Error_class`).
pub fn class_of(code: c_int) -> Result<c_int> {
    let mut class = 0;
    // SAFETY: `class` is a valid out-pointer.
    let rc = unsafe { crate::mpi::sys::MPI_Error_class(code, &mut class) };
    check(rc, "MPI_Error_class")?;
    Ok(class)
}

/// Calls `MPI_COMM_SELF`'s error handler with `code`
/// (`MPI_Comm_call_errhandler`). Under the default handler,
/// `MPI_ERRORS_ARE_FATAL`, this does not return.
/// Under another MPI than the build's (`built_for`) there is no handle to
/// pass: nothing is called.
pub fn call_self_errhandler(code: c_int) -> Result<()> {
    if crate::mpi::built_for::mismatch().is_some() {
        return Ok(());
    }
    // SAFETY: reading the handle of MPI_COMM_SELF, which exists from
    // MPI_Init to MPI_Finalize; MPI takes the communicator by value.
    let rc = unsafe {
        crate::mpi::sys::MPI_Comm_call_errhandler(crate::mpi::sys::RSMPI_COMM_SELF, code)
    };
    check(rc, "MPI_Comm_call_errhandler")
}
