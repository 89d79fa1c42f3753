//! An attribute value that is a heap byte string (`Box<Vec<u8>>` behind
//! the attribute pointer), and the marshal callbacks that write it as is.
//! The tests set values, and read them back in unmarshal callbacks, each
//! their own way (with counters, with injected failures).

use super::ok;
use mpix_marshal::testing::mpi::sys as ffi;
use mpix_marshal::testing::mpi::{Datatype, MPI_Aint};
use std::os::raw::{c_char, c_int, c_void};

/// The byte string of keyval `k` on `t`, if set.
pub fn get_blob(t: Datatype, k: c_int) -> Option<Vec<u8>> {
    let mut p: *mut c_void = std::ptr::null_mut();
    let mut flag = 0;
    ok(
        unsafe {
            ffi::MPI_Type_get_attr(t, k, &mut p as *mut *mut c_void as *mut c_void, &mut flag)
        },
        "MPI_Type_get_attr",
    );
    // SAFETY: every value of these keyvals is a Box<Vec<u8>>.
    (flag != 0).then(|| unsafe { (*(p as *const Vec<u8>)).clone() })
}

/// Size callback: the string's length.
pub unsafe extern "C" fn blob_size(
    k: c_int,
    _name: *const c_char,
    _rep: *const c_char,
    t: ffi::MPI_Datatype,
    size: *mut MPI_Aint,
) -> c_int {
    *size = get_blob(t, k).map_or(0, |v| v.len()) as MPI_Aint;
    0
}

/// Marshal callback: the string's bytes; an error if they do not fit.
pub unsafe extern "C" fn blob_marshal(
    k: c_int,
    _name: *const c_char,
    _rep: *const c_char,
    t: ffi::MPI_Datatype,
    out: *mut c_void,
    outsize: MPI_Aint,
    written: *mut MPI_Aint,
) -> c_int {
    let v = get_blob(t, k).unwrap_or_default();
    if v.len() as MPI_Aint > outsize {
        *written = 0;
        return 1;
    }
    std::ptr::copy_nonoverlapping(v.as_ptr(), out as *mut u8, v.len());
    *written = v.len() as MPI_Aint;
    0
}
