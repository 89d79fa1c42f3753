//! Bindings of our own for the MPI-5.0 standard ABI (the `abi` feature),
//! in place of `mpi-sys`, which does not compile against `mpi_abi.h` (its
//! shim uses `MPI_Fint`, which the ABI header does not define).
//!
//! The ABI fixes what is declared here, for every implementation of it:
//! handles are pointers to incomplete structs, the predefined handles and
//! the constants below have the values the standard assigns (MPI-5.0,
//! Appendix A; `mpi_abi.h` of MPICH 5 spells them out), and the function
//! signatures are the standard's C bindings with those types. So these
//! declarations are sound against any `libmpi_abi.so`. The names are
//! those of `mpi-sys` (handles as newtypes, `RSMPI_` for predefined
//! handles), so that the library and its tests use either through
//! `crate::mpi::sys` unchanged. Only what the library, its tests, benches
//! and the command call is declared; the function list was taken from
//! `mpi_abi.h` (MPI_ABI_VERSION 1.0) by name.
#![allow(
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    clippy::upper_case_acronyms
)]

use std::os::raw::{c_char, c_int, c_void};

#[cfg(not(target_pointer_width = "64"))]
compile_error!("the abi feature is declared for 64-bit targets (MPI_Aint is intptr_t)");

/// `MPI_Aint`: `intptr_t`.
pub type MPI_Aint = isize;
/// `MPI_Count`, `MPI_Offset`: `int64_t`.
pub type MPI_Count = i64;
pub type MPI_Offset = i64;

macro_rules! handle {
    ($name:ident, $opaque:ident) => {
        /// An incomplete struct: handles only point to it.
        #[repr(C)]
        pub struct $opaque {
            _private: [u8; 0],
        }
        /// A handle: a pointer, as the ABI defines it.
        #[repr(transparent)]
        #[derive(Debug, Copy, Clone, PartialEq, Eq)]
        pub struct $name(pub *mut $opaque);
    };
}
handle!(MPI_Datatype, MPI_ABI_Datatype);
handle!(MPI_Comm, MPI_ABI_Comm);
handle!(MPI_Errhandler, MPI_ABI_Errhandler);
handle!(MPI_Request, MPI_ABI_Request);
handle!(MPI_Message, MPI_ABI_Message);
// The checker's too (check/: it interposes calls that take them).
handle!(MPI_Op, MPI_ABI_Op);
handle!(MPI_Group, MPI_ABI_Group);
handle!(MPI_Info, MPI_ABI_Info);
handle!(MPI_Win, MPI_ABI_Win);
handle!(MPI_File, MPI_ABI_File);

/// `MPI_User_function`, in mpi-sys's shape (an optional function pointer).
pub type MPI_User_function =
    Option<unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut MPI_Datatype)>;

/// `MPI_Status`: the ABI's layout (three public fields, five internal).
#[repr(C)]
#[derive(Debug, Copy, Clone, Default, PartialEq, Eq)]
pub struct MPI_Status {
    pub MPI_SOURCE: c_int,
    pub MPI_TAG: c_int,
    pub MPI_ERROR: c_int,
    pub MPI_internal: [c_int; 5],
}

/// A predefined handle of the ABI, by its fixed value.
const fn fixed<T>(value: usize) -> *mut T {
    value as *mut T
}

pub const RSMPI_COMM_NULL: MPI_Comm = MPI_Comm(fixed(0x100));
pub const RSMPI_COMM_WORLD: MPI_Comm = MPI_Comm(fixed(0x101));
pub const RSMPI_COMM_SELF: MPI_Comm = MPI_Comm(fixed(0x102));
pub const RSMPI_ERRORS_ARE_FATAL: MPI_Errhandler = MPI_Errhandler(fixed(0x141));
pub const RSMPI_ERRORS_RETURN: MPI_Errhandler = MPI_Errhandler(fixed(0x143));
pub const RSMPI_DATATYPE_NULL: MPI_Datatype = MPI_Datatype(fixed(0x200));
pub const RSMPI_DOUBLE: MPI_Datatype = MPI_Datatype(fixed(0x214));
pub const RSMPI_UINT8_T: MPI_Datatype = MPI_Datatype(fixed(0x241));
pub const RSMPI_REQUEST_NULL: MPI_Request = MPI_Request(fixed(0x180));
pub const RSMPI_MESSAGE_NULL: MPI_Message = MPI_Message(fixed(0x128));
pub const RSMPI_STATUS_IGNORE: *mut MPI_Status = std::ptr::null_mut();
pub const RSMPI_STATUSES_IGNORE: *mut MPI_Status = std::ptr::null_mut();
pub const RSMPI_ANY_SOURCE: c_int = -1;
pub const RSMPI_ANY_TAG: c_int = -2;
pub const RSMPI_PROC_NULL: c_int = -3;
pub const RSMPI_UINT64_T: MPI_Datatype = MPI_Datatype(fixed(0x259));
pub const RSMPI_UNDEFINED: c_int = -32766;
pub const RSMPI_THREAD_MULTIPLE: c_int = 4096;

// Error classes and other integer constants: the ABI's values, in the
// integer types mpi-sys gives them (callers cast with `as`).
pub const MPI_SUCCESS: u32 = 0;
pub const MPI_ERR_TYPE: u32 = 3;
pub const MPI_ERR_ARG: u32 = 13;
pub const MPI_ERR_OTHER: u32 = 16;
pub const MPI_ERR_INTERN: u32 = 17;
pub const MPI_ERR_LASTCODE: u32 = 0x3fff;
pub const MPI_UNDEFINED: i32 = -32766;
pub const MPI_THREAD_SINGLE: u32 = 0;
pub const MPI_THREAD_FUNNELED: u32 = 1024;
pub const MPI_THREAD_SERIALIZED: u32 = 2048;
pub const MPI_THREAD_MULTIPLE: u32 = 4096;
pub const MPI_MAX_OBJECT_NAME: u32 = 128;
pub const MPI_MAX_ERROR_STRING: u32 = 512;
pub const MPI_MAX_LIBRARY_VERSION_STRING: u32 = 8192;

pub type MPI_Comm_errhandler_function =
    Option<unsafe extern "C" fn(comm: *mut MPI_Comm, error_code: *mut c_int, ...)>;
pub type MPI_Type_copy_attr_function = Option<
    unsafe extern "C" fn(
        datatype: MPI_Datatype,
        keyval: c_int,
        extra_state: *mut c_void,
        attribute_val_in: *mut c_void,
        attribute_val_out: *mut c_void,
        flag: *mut c_int,
    ) -> c_int,
>;
pub type MPI_Type_delete_attr_function = Option<
    unsafe extern "C" fn(
        datatype: MPI_Datatype,
        keyval: c_int,
        attribute_val: *mut c_void,
        extra_state: *mut c_void,
    ) -> c_int,
>;

pub type MPI_Comm_copy_attr_function = Option<
    unsafe extern "C" fn(
        comm: MPI_Comm,
        keyval: c_int,
        extra_state: *mut c_void,
        attribute_val_in: *mut c_void,
        attribute_val_out: *mut c_void,
        flag: *mut c_int,
    ) -> c_int,
>;
pub type MPI_Comm_delete_attr_function = Option<
    unsafe extern "C" fn(
        comm: MPI_Comm,
        keyval: c_int,
        attribute_val: *mut c_void,
        extra_state: *mut c_void,
    ) -> c_int,
>;

// What the type exchange (`mpi::comm`) calls.
extern "C" {
    pub fn MPI_Allgather(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
    ) -> c_int;
    pub fn MPI_Bcast(
        buffer: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        root: c_int,
        comm: MPI_Comm,
    ) -> c_int;
    pub fn MPI_Comm_create_keyval(
        comm_copy_attr_fn: MPI_Comm_copy_attr_function,
        comm_delete_attr_fn: MPI_Comm_delete_attr_function,
        comm_keyval: *mut c_int,
        extra_state: *mut c_void,
    ) -> c_int;
    pub fn MPI_Comm_delete_attr(comm: MPI_Comm, comm_keyval: c_int) -> c_int;
    pub fn MPI_Comm_dup(comm: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int;
    pub fn MPI_Comm_free(comm: *mut MPI_Comm) -> c_int;
    pub fn MPI_Comm_free_keyval(comm_keyval: *mut c_int) -> c_int;
    pub fn MPI_Comm_get_attr(
        comm: MPI_Comm,
        comm_keyval: c_int,
        attribute_val: *mut c_void,
        flag: *mut c_int,
    ) -> c_int;
    pub fn MPI_Comm_rank(comm: MPI_Comm, rank: *mut c_int) -> c_int;
    pub fn MPI_Comm_remote_size(comm: MPI_Comm, size: *mut c_int) -> c_int;
    pub fn MPI_Comm_set_attr(
        comm: MPI_Comm,
        comm_keyval: c_int,
        attribute_val: *mut c_void,
    ) -> c_int;
    pub fn MPI_Comm_size(comm: MPI_Comm, size: *mut c_int) -> c_int;
    pub fn MPI_Comm_test_inter(comm: MPI_Comm, flag: *mut c_int) -> c_int;
    pub fn MPI_Get_count(
        status: *const MPI_Status,
        datatype: MPI_Datatype,
        count: *mut c_int,
    ) -> c_int;
    pub fn MPI_Improbe(
        source: c_int,
        tag: c_int,
        comm: MPI_Comm,
        flag: *mut c_int,
        message: *mut MPI_Message,
        status: *mut MPI_Status,
    ) -> c_int;
    pub fn MPI_Isend(
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    pub fn MPI_Mprobe(
        source: c_int,
        tag: c_int,
        comm: MPI_Comm,
        message: *mut MPI_Message,
        status: *mut MPI_Status,
    ) -> c_int;
    pub fn MPI_Mrecv(
        buf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        message: *mut MPI_Message,
        status: *mut MPI_Status,
    ) -> c_int;
    pub fn MPI_Wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int;
    pub fn MPI_Issend(
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int;
    pub fn MPI_Test(request: *mut MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> c_int;
    pub fn MPI_Ibarrier(comm: MPI_Comm, request: *mut MPI_Request) -> c_int;
    pub fn MPI_Request_free(request: *mut MPI_Request) -> c_int;
    pub fn MPI_Send(
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
    ) -> c_int;
    pub fn MPI_Waitall(
        count: c_int,
        array_of_requests: *mut MPI_Request,
        array_of_statuses: *mut MPI_Status,
    ) -> c_int;
}

extern "C" {
    pub fn MPI_Add_error_class(errorclass: *mut c_int) -> c_int;
    pub fn MPI_Add_error_code(errorclass: c_int, errorcode: *mut c_int) -> c_int;
    pub fn MPI_Add_error_string(errorcode: c_int, string: *const c_char) -> c_int;
    pub fn MPI_Comm_call_errhandler(comm: MPI_Comm, errorcode: c_int) -> c_int;
    pub fn MPI_Comm_create_errhandler(
        comm_errhandler_fn: MPI_Comm_errhandler_function,
        errhandler: *mut MPI_Errhandler,
    ) -> c_int;
    pub fn MPI_Comm_set_errhandler(comm: MPI_Comm, errhandler: MPI_Errhandler) -> c_int;
    pub fn MPI_Error_class(errorcode: c_int, errorclass: *mut c_int) -> c_int;
    pub fn MPI_Error_string(errorcode: c_int, string: *mut c_char, resultlen: *mut c_int) -> c_int;
    pub fn MPI_Finalize() -> c_int;
    pub fn MPI_Finalized(flag: *mut c_int) -> c_int;
    pub fn MPI_Get_library_version(version: *mut c_char, resultlen: *mut c_int) -> c_int;
    pub fn MPI_Init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int;
    pub fn MPI_Init_thread(
        argc: *mut c_int,
        argv: *mut *mut *mut c_char,
        required: c_int,
        provided: *mut c_int,
    ) -> c_int;
    pub fn MPI_Initialized(flag: *mut c_int) -> c_int;
    pub fn MPI_Pack(
        inbuf: *const c_void,
        incount: c_int,
        datatype: MPI_Datatype,
        outbuf: *mut c_void,
        outsize: c_int,
        position: *mut c_int,
        comm: MPI_Comm,
    ) -> c_int;
    pub fn MPI_Pack_size(
        incount: c_int,
        datatype: MPI_Datatype,
        comm: MPI_Comm,
        size: *mut c_int,
    ) -> c_int;
    pub fn MPI_Query_thread(provided: *mut c_int) -> c_int;
    pub fn MPI_Type_commit(datatype: *mut MPI_Datatype) -> c_int;
    pub fn MPI_Type_contiguous(
        count: c_int,
        oldtype: MPI_Datatype,
        newtype: *mut MPI_Datatype,
    ) -> c_int;
    pub fn MPI_Type_create_darray(
        size: c_int,
        rank: c_int,
        ndims: c_int,
        array_of_gsizes: *const c_int,
        array_of_distribs: *const c_int,
        array_of_dargs: *const c_int,
        array_of_psizes: *const c_int,
        order: c_int,
        oldtype: MPI_Datatype,
        newtype: *mut MPI_Datatype,
    ) -> c_int;
    pub fn MPI_Type_create_f90_complex(p: c_int, r: c_int, newtype: *mut MPI_Datatype) -> c_int;
    pub fn MPI_Type_create_f90_integer(r: c_int, newtype: *mut MPI_Datatype) -> c_int;
    pub fn MPI_Type_create_f90_real(p: c_int, r: c_int, newtype: *mut MPI_Datatype) -> c_int;
    pub fn MPI_Type_create_hindexed(
        count: c_int,
        array_of_blocklengths: *const c_int,
        array_of_displacements: *const MPI_Aint,
        oldtype: MPI_Datatype,
        newtype: *mut MPI_Datatype,
    ) -> c_int;
    pub fn MPI_Type_create_hindexed_block(
        count: c_int,
        blocklength: c_int,
        array_of_displacements: *const MPI_Aint,
        oldtype: MPI_Datatype,
        newtype: *mut MPI_Datatype,
    ) -> c_int;
    pub fn MPI_Type_create_hvector(
        count: c_int,
        blocklength: c_int,
        stride: MPI_Aint,
        oldtype: MPI_Datatype,
        newtype: *mut MPI_Datatype,
    ) -> c_int;
    pub fn MPI_Type_create_indexed_block(
        count: c_int,
        blocklength: c_int,
        array_of_displacements: *const c_int,
        oldtype: MPI_Datatype,
        newtype: *mut MPI_Datatype,
    ) -> c_int;
    pub fn MPI_Type_create_keyval(
        type_copy_attr_fn: MPI_Type_copy_attr_function,
        type_delete_attr_fn: MPI_Type_delete_attr_function,
        type_keyval: *mut c_int,
        extra_state: *mut c_void,
    ) -> c_int;
    pub fn MPI_Type_create_resized(
        oldtype: MPI_Datatype,
        lb: MPI_Aint,
        extent: MPI_Aint,
        newtype: *mut MPI_Datatype,
    ) -> c_int;
    pub fn MPI_Type_create_struct(
        count: c_int,
        array_of_blocklengths: *const c_int,
        array_of_displacements: *const MPI_Aint,
        array_of_types: *const MPI_Datatype,
        newtype: *mut MPI_Datatype,
    ) -> c_int;
    pub fn MPI_Type_create_subarray(
        ndims: c_int,
        array_of_sizes: *const c_int,
        array_of_subsizes: *const c_int,
        array_of_starts: *const c_int,
        order: c_int,
        oldtype: MPI_Datatype,
        newtype: *mut MPI_Datatype,
    ) -> c_int;
    pub fn MPI_Type_delete_attr(datatype: MPI_Datatype, type_keyval: c_int) -> c_int;
    pub fn MPI_Type_dup(oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int;
    pub fn MPI_Type_free(datatype: *mut MPI_Datatype) -> c_int;
    pub fn MPI_Type_free_keyval(type_keyval: *mut c_int) -> c_int;
    pub fn MPI_Type_get_attr(
        datatype: MPI_Datatype,
        type_keyval: c_int,
        attribute_val: *mut c_void,
        flag: *mut c_int,
    ) -> c_int;
    pub fn MPI_Type_get_extent(
        datatype: MPI_Datatype,
        lb: *mut MPI_Aint,
        extent: *mut MPI_Aint,
    ) -> c_int;
    pub fn MPI_Type_get_extent_x(
        datatype: MPI_Datatype,
        lb: *mut MPI_Count,
        extent: *mut MPI_Count,
    ) -> c_int;
    pub fn MPI_Type_get_name(
        datatype: MPI_Datatype,
        type_name: *mut c_char,
        resultlen: *mut c_int,
    ) -> c_int;
    pub fn MPI_Type_get_true_extent_x(
        datatype: MPI_Datatype,
        true_lb: *mut MPI_Count,
        true_extent: *mut MPI_Count,
    ) -> c_int;
    pub fn MPI_Type_indexed(
        count: c_int,
        array_of_blocklengths: *const c_int,
        array_of_displacements: *const c_int,
        oldtype: MPI_Datatype,
        newtype: *mut MPI_Datatype,
    ) -> c_int;
    pub fn MPI_Type_set_attr(
        datatype: MPI_Datatype,
        type_keyval: c_int,
        attribute_val: *mut c_void,
    ) -> c_int;
    pub fn MPI_Type_set_name(datatype: MPI_Datatype, type_name: *const c_char) -> c_int;
    pub fn MPI_Type_size_x(datatype: MPI_Datatype, size: *mut MPI_Count) -> c_int;
    pub fn MPI_Type_vector(
        count: c_int,
        blocklength: c_int,
        stride: c_int,
        oldtype: MPI_Datatype,
        newtype: *mut MPI_Datatype,
    ) -> c_int;
    pub fn MPI_Type_get_envelope(
        datatype: MPI_Datatype,
        num_integers: *mut c_int,
        num_addresses: *mut c_int,
        num_datatypes: *mut c_int,
        combiner: *mut c_int,
    ) -> c_int;
    pub fn MPI_Type_get_contents(
        datatype: MPI_Datatype,
        max_integers: c_int,
        max_addresses: c_int,
        max_datatypes: c_int,
        array_of_integers: *mut c_int,
        array_of_addresses: *mut MPI_Aint,
        array_of_datatypes: *mut MPI_Datatype,
    ) -> c_int;
    pub fn MPI_Type_get_envelope_c(
        datatype: MPI_Datatype,
        num_integers: *mut MPI_Count,
        num_addresses: *mut MPI_Count,
        num_large_counts: *mut MPI_Count,
        num_datatypes: *mut MPI_Count,
        combiner: *mut c_int,
    ) -> c_int;
    pub fn MPI_Type_get_contents_c(
        datatype: MPI_Datatype,
        max_integers: MPI_Count,
        max_addresses: MPI_Count,
        max_large_counts: MPI_Count,
        max_datatypes: MPI_Count,
        array_of_integers: *mut c_int,
        array_of_addresses: *mut MPI_Aint,
        array_of_large_counts: *mut MPI_Count,
        array_of_datatypes: *mut MPI_Datatype,
    ) -> c_int;
    pub fn MPI_Type_toint(datatype: MPI_Datatype) -> c_int;
    pub fn MPI_Type_fromint(datatype: c_int) -> MPI_Datatype;
    pub fn MPI_Abi_get_version(abi_major: *mut c_int, abi_minor: *mut c_int) -> c_int;
    pub fn MPI_Type_size(datatype: MPI_Datatype, size: *mut c_int) -> c_int;
    pub fn MPI_Type_get_true_extent(
        datatype: MPI_Datatype,
        true_lb: *mut MPI_Aint,
        true_extent: *mut MPI_Aint,
    ) -> c_int;
    pub fn MPI_Unpack(
        inbuf: *const c_void,
        insize: c_int,
        position: *mut c_int,
        outbuf: *mut c_void,
        outcount: c_int,
        datatype: MPI_Datatype,
        comm: MPI_Comm,
    ) -> c_int;
}
