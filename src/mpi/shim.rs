//! Declarations of the C shim in `src/shim/shim.c`.

use crate::mpi::sys::{MPI_Aint, MPI_Count, MPI_Datatype};
use std::os::raw::{c_char, c_int};

/// What a shim wrapper returns when the local MPI lacks the call.
pub const UNSUPPORTED: c_int = -1;

#[repr(C)]
pub struct PredefinedEntry {
    pub code: c_int,
    pub name: *const c_char,
    pub datatype: MPI_Datatype,
}

/// Mirrors `mpixm_constants` in the shim.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct Constants {
    pub named: c_int,
    pub dup: c_int,
    pub contiguous: c_int,
    pub vector: c_int,
    pub hvector: c_int,
    pub indexed: c_int,
    pub hindexed: c_int,
    pub indexed_block: c_int,
    pub hindexed_block: c_int,
    pub struct_: c_int,
    pub subarray: c_int,
    pub darray: c_int,
    pub f90_real: c_int,
    pub f90_complex: c_int,
    pub f90_integer: c_int,
    pub resized: c_int,
    pub value_index: c_int,
    pub hvector_integer: c_int,
    pub hindexed_integer: c_int,
    pub struct_integer: c_int,
    pub order_c: c_int,
    pub order_fortran: c_int,
    pub distribute_block: c_int,
    pub distribute_cyclic: c_int,
    pub distribute_none: c_int,
    pub distribute_dflt_darg: c_int,
    pub undefined: c_int,
    pub max_object_name: c_int,
    pub have_large_count: c_int,
    pub have_mpi1: c_int,
    pub have_value_index: c_int,
    pub is_open_mpi: c_int,
    pub version: c_int,
    pub subversion: c_int,
    pub keyval_invalid: c_int,
    pub root: c_int,
}

extern "C" {
    pub fn mpixm_predefined_table(n: *mut c_int) -> *const PredefinedEntry;
    pub fn mpixm_datatype_null() -> MPI_Datatype;
    /// The MPI mpi.h is from (a static NUL-terminated string).
    pub fn mpixm_built_for() -> *const std::os::raw::c_char;
    pub fn mpixm_get_constants(c: *mut Constants);
    pub fn mpixm_pmpi_type_free_keyval(keyval: *mut c_int) -> c_int;

    pub fn mpixm_get_envelope(
        t: MPI_Datatype,
        ni: *mut MPI_Count,
        na: *mut MPI_Count,
        nc: *mut MPI_Count,
        nd: *mut MPI_Count,
        combiner: *mut c_int,
    ) -> c_int;
    pub fn mpixm_get_contents(
        t: MPI_Datatype,
        ni: MPI_Count,
        na: MPI_Count,
        nc: MPI_Count,
        nd: MPI_Count,
        ints: *mut c_int,
        addrs: *mut MPI_Aint,
        counts: *mut MPI_Count,
        types: *mut MPI_Datatype,
    ) -> c_int;

    pub fn mpixm_type_contiguous_c(
        count: MPI_Count,
        old: MPI_Datatype,
        out: *mut MPI_Datatype,
    ) -> c_int;
    pub fn mpixm_type_vector_c(
        count: MPI_Count,
        blocklength: MPI_Count,
        stride: MPI_Count,
        old: MPI_Datatype,
        out: *mut MPI_Datatype,
    ) -> c_int;
    pub fn mpixm_type_create_hvector_c(
        count: MPI_Count,
        blocklength: MPI_Count,
        stride: MPI_Count,
        old: MPI_Datatype,
        out: *mut MPI_Datatype,
    ) -> c_int;
    pub fn mpixm_type_indexed_c(
        count: MPI_Count,
        blocklengths: *const MPI_Count,
        displs: *const MPI_Count,
        old: MPI_Datatype,
        out: *mut MPI_Datatype,
    ) -> c_int;
    pub fn mpixm_type_create_hindexed_c(
        count: MPI_Count,
        blocklengths: *const MPI_Count,
        displs: *const MPI_Count,
        old: MPI_Datatype,
        out: *mut MPI_Datatype,
    ) -> c_int;
    pub fn mpixm_type_create_indexed_block_c(
        count: MPI_Count,
        blocklength: MPI_Count,
        displs: *const MPI_Count,
        old: MPI_Datatype,
        out: *mut MPI_Datatype,
    ) -> c_int;
    pub fn mpixm_type_create_hindexed_block_c(
        count: MPI_Count,
        blocklength: MPI_Count,
        displs: *const MPI_Count,
        old: MPI_Datatype,
        out: *mut MPI_Datatype,
    ) -> c_int;
    pub fn mpixm_type_create_struct_c(
        count: MPI_Count,
        blocklengths: *const MPI_Count,
        displs: *const MPI_Count,
        types: *const MPI_Datatype,
        out: *mut MPI_Datatype,
    ) -> c_int;
    pub fn mpixm_type_create_subarray_c(
        ndims: c_int,
        sizes: *const MPI_Count,
        subsizes: *const MPI_Count,
        starts: *const MPI_Count,
        order: c_int,
        old: MPI_Datatype,
        out: *mut MPI_Datatype,
    ) -> c_int;
    #[allow(clippy::too_many_arguments)]
    pub fn mpixm_type_create_darray_c(
        size: c_int,
        rank: c_int,
        ndims: c_int,
        gsizes: *const MPI_Count,
        distribs: *const c_int,
        dargs: *const c_int,
        psizes: *const c_int,
        order: c_int,
        old: MPI_Datatype,
        out: *mut MPI_Datatype,
    ) -> c_int;
    pub fn mpixm_type_create_resized_c(
        lb: MPI_Count,
        extent: MPI_Count,
        old: MPI_Datatype,
        out: *mut MPI_Datatype,
    ) -> c_int;
    pub fn mpixm_type_hvector(
        count: c_int,
        blocklength: c_int,
        stride: MPI_Aint,
        old: MPI_Datatype,
        out: *mut MPI_Datatype,
    ) -> c_int;
    pub fn mpixm_type_hindexed(
        count: c_int,
        blocklengths: *mut c_int,
        displs: *mut MPI_Aint,
        old: MPI_Datatype,
        out: *mut MPI_Datatype,
    ) -> c_int;
    pub fn mpixm_type_struct(
        count: c_int,
        blocklengths: *mut c_int,
        displs: *mut MPI_Aint,
        types: *mut MPI_Datatype,
        out: *mut MPI_Datatype,
    ) -> c_int;
    pub fn mpixm_watch_finalize(
        flag: *const std::sync::atomic::AtomicI32,
        on_finalize: extern "C" fn(),
    ) -> c_int;
    pub fn mpixm_type_create_f90(
        which: c_int,
        p: c_int,
        r: c_int,
        guarded: c_int,
        out: *mut MPI_Datatype,
    ) -> c_int;
    pub fn mpixm_type_get_value_index(
        value: MPI_Datatype,
        index: MPI_Datatype,
        out: *mut MPI_Datatype,
    ) -> c_int;
}
