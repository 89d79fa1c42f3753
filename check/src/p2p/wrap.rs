//! The interposed point-to-point calls: each sends its companion (sends)
//! or queues its receive (receives) around the unchanged `PMPI_` call
//! (see `crate::p2p`). Without `MPIX_CHECK_P2P=1`, or on a communicator
//! without a channel, each is its `PMPI_` call and nothing else.

#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc)]
#![allow(clippy::too_many_arguments)]

use super::{attach, not_posted, received, receiving, sent};
use mpi_sys::*;
use std::ffi::{c_int, c_void};

type Dt = MPI_Datatype;

macro_rules! blocking_send {
    ($name:ident, $pmpi:ident) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            buf: *const c_void,
            count: c_int,
            t: Dt,
            dest: c_int,
            tag: c_int,
            comm: MPI_Comm,
        ) -> c_int {
            sent(comm, dest, tag, count, t);
            // SAFETY: the user's arguments, unchanged.
            unsafe { $pmpi(buf, count, t, dest, tag, comm) }
        }
    };
}

blocking_send!(MPI_Send, PMPI_Send);
blocking_send!(MPI_Ssend, PMPI_Ssend);
blocking_send!(MPI_Bsend, PMPI_Bsend);
blocking_send!(MPI_Rsend, PMPI_Rsend);

macro_rules! nonblocking_send {
    ($name:ident, $pmpi:ident) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            buf: *const c_void,
            count: c_int,
            t: Dt,
            dest: c_int,
            tag: c_int,
            comm: MPI_Comm,
            request: *mut MPI_Request,
        ) -> c_int {
            sent(comm, dest, tag, count, t);
            // SAFETY: the user's arguments, unchanged.
            unsafe { $pmpi(buf, count, t, dest, tag, comm, request) }
        }
    };
}

nonblocking_send!(MPI_Isend, PMPI_Isend);
nonblocking_send!(MPI_Issend, PMPI_Issend);
nonblocking_send!(MPI_Ibsend, PMPI_Ibsend);
nonblocking_send!(MPI_Irsend, PMPI_Irsend);

/// The user's status, or ours where the user ignores it.
fn status_or(status: *mut MPI_Status, own: &mut MPI_Status) -> *mut MPI_Status {
    // SAFETY: reads mpi-sys's copy of MPI_STATUS_IGNORE.
    if status == unsafe { RSMPI_STATUS_IGNORE } {
        own
    } else {
        status
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Recv(
    buf: *mut c_void,
    count: c_int,
    t: Dt,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    let key = receiving("MPI_Recv", comm, source, tag, count, t);
    if key.is_none() {
        // SAFETY: the user's arguments, unchanged.
        return unsafe { PMPI_Recv(buf, count, t, source, tag, comm, status) };
    }
    // SAFETY: MPI_Status is plain data.
    let mut own: MPI_Status = unsafe { std::mem::zeroed() };
    let st = status_or(status, &mut own);
    // SAFETY: the user's arguments; st is the user's status or ours.
    let rc = unsafe { PMPI_Recv(buf, count, t, source, tag, comm, st) };
    if rc != 0 {
        not_posted(key);
        return rc;
    }
    // SAFETY: MPI wrote the status.
    received(key, unsafe { &*st }).err().unwrap_or(rc)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Irecv(
    buf: *mut c_void,
    count: c_int,
    t: Dt,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let key = receiving("MPI_Irecv", comm, source, tag, count, t);
    // SAFETY: the user's arguments, unchanged.
    let rc = unsafe { PMPI_Irecv(buf, count, t, source, tag, comm, request) };
    if rc != 0 {
        not_posted(key);
    } else {
        // SAFETY: MPI wrote the request.
        attach(key, unsafe { *request });
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Sendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Dt,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Dt,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    sent(comm, dest, sendtag, sendcount, sendtype);
    let key = receiving("MPI_Sendrecv", comm, source, recvtag, recvcount, recvtype);
    // SAFETY: MPI_Status is plain data.
    let mut own: MPI_Status = unsafe { std::mem::zeroed() };
    let st = if key.is_some() {
        status_or(status, &mut own)
    } else {
        status
    };
    // SAFETY: the user's arguments; st is the user's status or ours.
    let rc = unsafe {
        PMPI_Sendrecv(
            sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
            recvtag, comm, st,
        )
    };
    if rc != 0 {
        not_posted(key);
        return rc;
    }
    // SAFETY: MPI wrote the status when key is some.
    match key {
        Some(_) => received(key, unsafe { &*st }).err().unwrap_or(rc),
        None => rc,
    }
}
