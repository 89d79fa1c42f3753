//! The interposed point-to-point calls: each sends its companion (sends)
//! or queues its receive (receives) around the unchanged `PMPI_` call
//! (see `crate::p2p`). Without `MPIX_CHECK_P2P=1`, or on a communicator
//! without a channel, each is its `PMPI_` call and nothing else.

#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc)]
#![allow(clippy::too_many_arguments)]

use super::{attach, attach_send, not_posted, received, receiving, sent, unsent};
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
            let key = sent(comm, dest, tag, count, t);
            // SAFETY: the user's arguments, unchanged.
            let rc = unsafe { $pmpi(buf, count, t, dest, tag, comm) };
            if rc != 0 {
                unsent(key);
            }
            rc
        }
    };
}

blocking_send!(MPI_Send, PMPI_Send);
blocking_send!(MPI_Ssend, PMPI_Ssend);
blocking_send!(MPI_Bsend, PMPI_Bsend);
blocking_send!(MPI_Rsend, PMPI_Rsend);

/// A send that returns a request: nonblocking (its companion now) or
/// persistent (a companion at each start).
macro_rules! send_with_request {
    ($name:ident, $pmpi:ident, $persistent:expr) => {
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
            let key = if $persistent {
                None
            } else {
                sent(comm, dest, tag, count, t)
            };
            // SAFETY: the user's arguments, unchanged.
            let rc = unsafe { $pmpi(buf, count, t, dest, tag, comm, request) };
            if rc != 0 {
                unsent(key);
            } else if !$persistent {
                // SAFETY: MPI wrote the request.
                attach_send(key, unsafe { *request });
            }
            if $persistent && rc == 0 {
                // SAFETY: MPI wrote the request.
                super::persistent_made(false, comm, dest, tag, count, t, unsafe { *request });
            }
            rc
        }
    };
}

send_with_request!(MPI_Isend, PMPI_Isend, false);
send_with_request!(MPI_Issend, PMPI_Issend, false);
send_with_request!(MPI_Ibsend, PMPI_Ibsend, false);
send_with_request!(MPI_Irsend, PMPI_Irsend, false);

/// The user's status, or ours where the user ignores it.
fn status_or(status: *mut MPI_Status, own: &mut MPI_Status) -> *mut MPI_Status {
    // SAFETY: reads mpi-sys's copy of MPI_STATUS_IGNORE.
    if status == unsafe { RSMPI_STATUS_IGNORE } {
        own
    } else {
        status
    }
}

/// Runs a blocking receive `f` with the user's status, or ours where the
/// user ignores it and the receive is checked, then checks it. `send`: a
/// companion to cancel when the call fails (none so far: see
/// `MPI_Sendrecv`).
fn checked_receive(
    key: Option<(usize, u64)>,
    send: Option<u64>,
    status: *mut MPI_Status,
    f: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    // SAFETY: MPI_Status is plain data.
    let mut own: MPI_Status = unsafe { std::mem::zeroed() };
    let st = if key.is_some() {
        status_or(status, &mut own)
    } else {
        status
    };
    let rc = f(st);
    if rc != 0 {
        unsent(send);
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
    // SAFETY: the user's arguments; the status is the user's or ours.
    checked_receive(key, None, status, |st| unsafe {
        PMPI_Recv(buf, count, t, source, tag, comm, st)
    })
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
    // Its companion stays when the call fails: the error may be the
    // receive's (a truncation) with the message sent, and a message
    // without its companion would leave its receiver waiting for one.
    let _ = sent(comm, dest, sendtag, sendcount, sendtype);
    let key = receiving("MPI_Sendrecv", comm, source, recvtag, recvcount, recvtype);
    // SAFETY: the user's arguments; the status is the user's or ours.
    checked_receive(key, None, status, |st| unsafe {
        PMPI_Sendrecv(
            sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
            recvtag, comm, st,
        )
    })
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
    // As in MPI_Sendrecv, the companion stays when the call fails.
    let _ = sent(comm, dest, sendtag, count, t);
    let key = receiving("MPI_Sendrecv_replace", comm, source, recvtag, count, t);
    // SAFETY: the user's arguments; the status is the user's or ours.
    checked_receive(key, None, status, |st| unsafe {
        PMPI_Sendrecv_replace(buf, count, t, dest, sendtag, source, recvtag, comm, st)
    })
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
    // SAFETY: the user's arguments; the status is the user's or ours.
    checked_receive(key, None, status, |st| unsafe {
        PMPI_Mrecv(buf, count, t, message, st)
    })
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

send_with_request!(MPI_Send_init, PMPI_Send_init, true);
send_with_request!(MPI_Ssend_init, PMPI_Ssend_init, true);
send_with_request!(MPI_Bsend_init, PMPI_Bsend_init, true);
send_with_request!(MPI_Rsend_init, PMPI_Rsend_init, true);

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

/// A cancel of a nonblocking send is watched: when MPI cancels the
/// message, its companion is cancelled at the request's completion.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cancel(request: *mut MPI_Request) -> c_int {
    // SAFETY: the user's request.
    super::cancel_requested(unsafe { *request });
    // SAFETY: the user's argument.
    unsafe { PMPI_Cancel(request) }
}
