//! The C API's raw pointers turned into Rust references and slices, each
//! kind of conversion in one function here, so that every pointer an
//! export receives is checked for NULL (an invalid-argument error naming
//! it) and dereferenced in one place. The rest of the contract (a pointer
//! is valid, aligned, and not shared with another argument) is the C
//! caller's, as each export's `# Safety` section documents.

use crate::api::Representation;
use crate::error::{Error, Result};
use std::ffi::CStr;
use std::fmt::Display;
use std::os::raw::{c_char, c_void};

/// `p` as a reference; None when it is NULL.
///
/// # Safety
/// A non-null `p` points to a valid, aligned `T` that nothing else reads
/// or writes while the reference lives.
pub(super) unsafe fn nullable<'a, T>(p: *mut T) -> Option<&'a mut T> {
    // SAFETY: the caller's contract, above; NULL gives None.
    unsafe { p.as_mut() }
}

/// A pointer argument, an output the export writes or an input it reads:
/// an invalid-argument error naming `what` when it is NULL.
///
/// # Safety
/// As for `nullable`.
pub(super) unsafe fn arg<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T> {
    // SAFETY: the caller's contract is `nullable`'s.
    unsafe { nullable(p) }.ok_or_else(|| Error::invalid(format!("{what} is NULL")))
}

/// A C string argument: an invalid-argument error naming `what` when it
/// is NULL.
///
/// # Safety
/// A non-null `p` points to a NUL-terminated string that stays unchanged
/// while the reference lives.
pub(super) unsafe fn c_str<'a>(p: *const c_char, what: &str) -> Result<&'a CStr> {
    if p.is_null() {
        return Err(Error::invalid(format!("{what} is NULL")));
    }
    // SAFETY: p is not NULL, and NUL-terminated by the caller's contract.
    Ok(unsafe { CStr::from_ptr(p) })
}

/// The representation the C string `typerep` names.
///
/// # Safety
/// As for `c_str`.
pub(super) unsafe fn representation(typerep: *const c_char) -> Result<Representation> {
    // SAFETY: the caller's contract is `c_str`'s.
    let name = unsafe { c_str(typerep, "typerep") }?;
    // Compared as bytes: a name that is not UTF-8 is simply unknown.
    Representation::from_bytes(name.to_bytes())
}

/// A size argument as a length: an invalid-argument error naming `what`
/// when it is negative.
pub(super) fn length<N>(n: N, what: &str) -> Result<usize>
where
    N: Copy + Display,
    usize: TryFrom<N>,
{
    non_negative(n, what)
}

/// A count argument as an unsigned `T`: an invalid-argument error naming
/// `what` when it is negative.
pub(super) fn non_negative<N, T>(n: N, what: &str) -> Result<T>
where
    N: Copy + Display,
    T: TryFrom<N>,
{
    T::try_from(n).map_err(|_| Error::invalid(format!("{what} is negative ({n})")))
}

/// An input buffer of `len` bytes at `p`: empty when `len` is 0 (whatever
/// `p` is, NULL included), None when `p` is NULL and `len` is not 0.
///
/// # Safety
/// A non-null `p` points to `len` readable bytes that nothing writes while
/// the slice lives.
pub(super) unsafe fn input<'a>(p: *const c_void, len: usize) -> Option<&'a [u8]> {
    if len == 0 {
        return Some(&[]);
    }
    if p.is_null() {
        return None;
    }
    // SAFETY: p is not NULL and points to len readable bytes, by the
    // caller's contract; len came from a non-negative MPI_Aint or int, so
    // it is at most isize::MAX.
    Some(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) })
}

/// An output buffer of `len` bytes at `p`: empty when `len` is 0 (whatever
/// `p` is, NULL included), None when `p` is NULL and `len` is not 0.
///
/// # Safety
/// A non-null `p` points to `len` writable bytes that nothing else reads
/// or writes while the slice lives.
pub(super) unsafe fn output<'a>(p: *mut c_void, len: usize) -> Option<&'a mut [u8]> {
    if len == 0 {
        return Some(&mut []);
    }
    if p.is_null() {
        return None;
    }
    // SAFETY: p is not NULL and points to len writable bytes no one else
    // uses, by the caller's contract; len is at most isize::MAX, as above.
    Some(unsafe { std::slice::from_raw_parts_mut(p.cast::<u8>(), len) })
}
