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

#[no_mangle]
pub unsafe extern "C" fn MPI_Sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    t: Dt,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    sent(comm, dest, sendtag, count, t);
    let key = receiving("MPI_Sendrecv_replace", comm, source, recvtag, count, t);
    // SAFETY: MPI_Status is plain data.
    let mut own: MPI_Status = unsafe { std::mem::zeroed() };
    let st = if key.is_some() {
        status_or(status, &mut own)
    } else {
        status
    };
    // SAFETY: the user's arguments; st is the user's status or ours.
    let rc =
        unsafe { PMPI_Sendrecv_replace(buf, count, t, dest, sendtag, source, recvtag, comm, st) };
    if rc != 0 {
        not_posted(key);
        return rc;
    }
    match key {
        // SAFETY: MPI wrote the status.
        Some(_) => received(key, unsafe { &*st }).err().unwrap_or(rc),
        None => rc,
    }
}

// ---- matched probes: the message's place in its (source, tag) order is
// taken at the probe, its receive's type comes with MPI_Mrecv ----

#[no_mangle]
pub unsafe extern "C" fn MPI_Mprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: MPI_Status is plain data.
    let mut own: MPI_Status = unsafe { std::mem::zeroed() };
    let st = status_or(status, &mut own);
    // SAFETY: the user's arguments; st is the user's status or ours.
    let rc = unsafe { PMPI_Mprobe(source, tag, comm, message, st) };
    if rc == 0 {
        // SAFETY: MPI wrote the status and the message.
        unsafe { super::matched(comm, &*st, *message) };
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Improbe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: *mut c_int,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: MPI_Status is plain data.
    let mut own: MPI_Status = unsafe { std::mem::zeroed() };
    let st = status_or(status, &mut own);
    // SAFETY: the user's arguments; st is the user's status or ours.
    let rc = unsafe { PMPI_Improbe(source, tag, comm, flag, message, st) };
    // SAFETY: MPI wrote flag (and, when set, the status and the message).
    if rc == 0 && unsafe { *flag } != 0 {
        // SAFETY: as above.
        unsafe { super::matched(comm, &*st, *message) };
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Mrecv(
    buf: *mut c_void,
    count: c_int,
    t: Dt,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the user's message handle.
    let key = super::receiving_matched("MPI_Mrecv", unsafe { *message }, count, t);
    // SAFETY: MPI_Status is plain data.
    let mut own: MPI_Status = unsafe { std::mem::zeroed() };
    let st = if key.is_some() {
        status_or(status, &mut own)
    } else {
        status
    };
    // SAFETY: the user's arguments; st is the user's status or ours.
    let rc = unsafe { PMPI_Mrecv(buf, count, t, message, st) };
    if rc != 0 {
        not_posted(key);
        return rc;
    }
    match key {
        // SAFETY: MPI wrote the status.
        Some(_) => received(key, unsafe { &*st }).err().unwrap_or(rc),
        None => rc,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Imrecv(
    buf: *mut c_void,
    count: c_int,
    t: Dt,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the user's message handle.
    let key = super::receiving_matched("MPI_Imrecv", unsafe { *message }, count, t);
    // SAFETY: the user's arguments, unchanged.
    let rc = unsafe { PMPI_Imrecv(buf, count, t, message, request) };
    if rc != 0 {
        not_posted(key);
    } else {
        // SAFETY: MPI wrote the request.
        attach(key, unsafe { *request });
    }
    rc
}

// ---- persistent requests: a companion or a queued receive per start ----

macro_rules! persistent_send {
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
            // SAFETY: the user's arguments, unchanged.
            let rc = unsafe { $pmpi(buf, count, t, dest, tag, comm, request) };
            if rc == 0 {
                // SAFETY: MPI wrote the request.
                super::persistent_made(false, comm, dest, tag, count, t, unsafe { *request });
            }
            rc
        }
    };
}

persistent_send!(MPI_Send_init, PMPI_Send_init);
persistent_send!(MPI_Ssend_init, PMPI_Ssend_init);
persistent_send!(MPI_Bsend_init, PMPI_Bsend_init);
persistent_send!(MPI_Rsend_init, PMPI_Rsend_init);

#[no_mangle]
pub unsafe extern "C" fn MPI_Recv_init(
    buf: *mut c_void,
    count: c_int,
    t: Dt,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the user's arguments, unchanged.
    let rc = unsafe { PMPI_Recv_init(buf, count, t, source, tag, comm, request) };
    if rc == 0 {
        // SAFETY: MPI wrote the request.
        super::persistent_made(true, comm, source, tag, count, t, unsafe { *request });
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Start(request: *mut MPI_Request) -> c_int {
    // SAFETY: the user's request.
    let r = unsafe { *request };
    let key = super::starting(r);
    // SAFETY: the user's argument.
    let rc = unsafe { PMPI_Start(request) };
    super::started(key, rc, r);
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Startall(count: c_int, requests: *mut MPI_Request) -> c_int {
    let n = count.max(0) as usize;
    // SAFETY: the user's array holds count requests.
    let reqs: Vec<MPI_Request> = (0..n).map(|i| unsafe { *requests.add(i) }).collect();
    let keys: Vec<_> = reqs.iter().map(|&r| super::starting(r)).collect();
    // SAFETY: the user's arguments.
    let rc = unsafe { PMPI_Startall(count, requests) };
    for (k, &r) in keys.into_iter().zip(&reqs) {
        super::started(k, rc, r);
    }
    rc
}
