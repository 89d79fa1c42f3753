//! The C types of a marshalled attribute's three callbacks, as the C
//! header declares them. A leaf module: the attribute registry
//! (`marshal::attributes`) calls these functions and the C API (`capi`)
//! takes them from the caller, so both import them from here and neither
//! imports the other.

use crate::mpi::{MPI_Aint, MPI_Datatype};
use std::os::raw::{c_char, c_int, c_void};

/// Sets `*size` to an upper bound of the bytes the marshal callback writes
/// for the attribute of `keyval` on `type`.
#[allow(non_camel_case_types)]
pub type MPIX_Type_marshal_attr_size_function = Option<
    unsafe extern "C" fn(
        keyval: c_int,
        canonical_name: *const c_char,
        typerep: *const c_char,
        r#type: MPI_Datatype,
        size: *mut MPI_Aint,
    ) -> c_int,
>;

/// Writes the attribute of `keyval` on `type` into `outbuf` (at most
/// `outsize` bytes) and sets `*num_written`.
#[allow(non_camel_case_types)]
pub type MPIX_Type_marshal_attr_function = Option<
    unsafe extern "C" fn(
        keyval: c_int,
        canonical_name: *const c_char,
        typerep: *const c_char,
        r#type: MPI_Datatype,
        outbuf: *mut c_void,
        outsize: MPI_Aint,
        num_written: *mut MPI_Aint,
    ) -> c_int,
>;

/// Sets the attribute of the local `keyval` on the rebuilt `type` from the
/// `insize` bytes at `inbuf` the marshal callback wrote.
#[allow(non_camel_case_types)]
pub type MPIX_Type_unmarshal_attr_function = Option<
    unsafe extern "C" fn(
        keyval: c_int,
        canonical_name: *const c_char,
        typerep: *const c_char,
        r#type: MPI_Datatype,
        inbuf: *const c_void,
        insize: MPI_Aint,
    ) -> c_int,
>;
