//! The library's version, for C: the header's `MPIX_MARSHAL_VERSION_*`
//! macros say which version a program was compiled against, and
//! `MPIX_Marshal_get_version` which one it runs with. Cargo.toml's
//! `version` is the one source: the constants are literals because cbindgen
//! copies literals only, and the build fails when they differ from it.

use super::panic::{boundary, OnError};
use super::ptr;
use std::os::raw::c_int;

/// The major version of the mpix-marshal this header belongs to (the
/// shared library's soname is libmpix_marshal.so.MAJOR).
pub const MPIX_MARSHAL_VERSION_MAJOR: c_int = 0;
/// The minor version of the mpix-marshal this header belongs to.
pub const MPIX_MARSHAL_VERSION_MINOR: c_int = 1;
/// The patch version of the mpix-marshal this header belongs to.
pub const MPIX_MARSHAL_VERSION_PATCH: c_int = 0;

/// A decimal number spelled in `s` (Cargo's version fields), at compile time.
const fn decimal(s: &str) -> c_int {
    let bytes = s.as_bytes();
    let mut n: c_int = 0;
    let mut i = 0;
    while i < bytes.len() {
        assert!(bytes[i].is_ascii_digit(), "a version field is not a number");
        n = n * 10 + (bytes[i] - b'0') as c_int;
        i += 1;
    }
    n
}

// Cargo.toml's version is the one source: the literals above must follow it.
const _: () = assert!(
    MPIX_MARSHAL_VERSION_MAJOR == decimal(env!("CARGO_PKG_VERSION_MAJOR"))
        && MPIX_MARSHAL_VERSION_MINOR == decimal(env!("CARGO_PKG_VERSION_MINOR"))
        && MPIX_MARSHAL_VERSION_PATCH == decimal(env!("CARGO_PKG_VERSION_PATCH")),
    "src/capi/version.rs: MPIX_MARSHAL_VERSION_* differ from Cargo.toml's version"
);

/// Sets `*major`, `*minor` and `*patch` to the version of the mpix-marshal
/// library the program runs with (compare with the MPIX_MARSHAL_VERSION_*
/// macros it was compiled with). May be called at any time, before
/// `MPI_Init` and after `MPI_Finalize` included. A NULL pointer is an error
/// of the MPIX_MARSHAL_ERR_INVALID_ARGUMENT kind, and nothing is written.
///
/// # Safety
/// `major`, `minor` and `patch` point to writable `int`s.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Marshal_get_version(
    major: *mut c_int,
    minor: *mut c_int,
    patch: *mut c_int,
) -> c_int {
    boundary(OnError::Raise, || {
        // SAFETY: each pointer is NULL or points to a writable int (the
        // contract above); all three are checked before any is written.
        let (major, minor, patch) = unsafe {
            (
                ptr::arg(major, "major")?,
                ptr::arg(minor, "minor")?,
                ptr::arg(patch, "patch")?,
            )
        };
        *major = MPIX_MARSHAL_VERSION_MAJOR;
        *minor = MPIX_MARSHAL_VERSION_MINOR;
        *patch = MPIX_MARSHAL_VERSION_PATCH;
        Ok(())
    })
}
