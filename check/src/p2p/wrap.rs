//! The interposed point-to-point calls: each sends its companion (sends)
//! or queues its receive (receives) around the unchanged `PMPI_` call
//! (see `crate::p2p`). Without `MPIX_CHECK_P2P=1`, or on a communicator
//! without a channel, each is its `PMPI_` call and nothing else.

#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc)]
#![allow(clippy::too_many_arguments)]
#![allow(clippy::useless_conversion)]

use super::{attach, attach_send, not_posted, received, receiving, sent, truncated, unsent};
use crate::mpi::errhandler;
use crate::sys::*;
use std::ffi::{c_int, c_void};

type Dt = MPI_Datatype;

macro_rules! blocking_send {
    ($(#[$m:meta])* $name:ident, $pmpi:ident, $ipmpi:ident, $cnt:ty) => {
        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            buf: *const c_void,
            count: $cnt,
            t: Dt,
            dest: c_int,
            tag: c_int,
            comm: MPI_Comm,
        ) -> c_int {
            // Companion and message posted under the one lock (crate::threads).
            let _s = crate::threads::enter();
            let key = sent(comm, dest, tag, count, t);
            let rc = if crate::hang::polled() {
                // SAFETY: the user's arguments, unchanged, in the
                // nonblocking form, polled (crate::hang).
                unsafe {
                    crate::hang::one(
                        stringify!($name),
                        crate::hang::Kind::Send,
                        comm,
                        dest,
                        tag,
                        RSMPI_STATUS_IGNORE,
                        |r| $ipmpi(buf, count, t, dest, tag, comm, r),
                    )
                }
            } else {
                // SAFETY: the user's arguments, unchanged.
                unsafe { $pmpi(buf, count, t, dest, tag, comm) }
            };
            if rc != 0 {
                unsent(key);
            }
            rc
        }
    };
}

blocking_send!(MPI_Send, PMPI_Send, PMPI_Isend, c_int);
blocking_send!(MPI_Ssend, PMPI_Ssend, PMPI_Issend, c_int);
blocking_send!(MPI_Bsend, PMPI_Bsend, PMPI_Ibsend, c_int);
blocking_send!(MPI_Rsend, PMPI_Rsend, PMPI_Irsend, c_int);

/// A send that returns a request: nonblocking (its companion now) or
/// persistent (a companion at each start).
macro_rules! send_with_request {
    ($(#[$m:meta])* $name:ident, $pmpi:ident, $persistent:expr, $cnt:ty) => {
        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            buf: *const c_void,
            count: $cnt,
            t: Dt,
            dest: c_int,
            tag: c_int,
            comm: MPI_Comm,
            request: *mut MPI_Request,
        ) -> c_int {
            let _s = crate::threads::enter();
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
                if key.is_some() {
                    // SAFETY: as above.
                    super::lost::send_posted(
                        stringify!($name),
                        unsafe { *request },
                        comm,
                        dest,
                        tag,
                        count.into(),
                        t,
                    );
                }
            }
            if rc == 0 {
                // SAFETY: MPI wrote the request.
                crate::hang::made(unsafe { *request }, stringify!($name),
                    crate::hang::Kind::Send, comm, dest, tag, $persistent);
            }
            if $persistent && rc == 0 {
                // SAFETY: MPI wrote the request.
                super::persistent_made(false, comm, dest, tag, count, t, unsafe { *request });
            }
            rc
        }
    };
}

send_with_request!(MPI_Isend, PMPI_Isend, false, c_int);
send_with_request!(MPI_Issend, PMPI_Issend, false, c_int);
send_with_request!(MPI_Ibsend, PMPI_Ibsend, false, c_int);
send_with_request!(MPI_Irsend, PMPI_Irsend, false, c_int);

/// The user's status, or ours where the user ignores it.
fn status_or(status: *mut MPI_Status, own: &mut MPI_Status) -> *mut MPI_Status {
    // SAFETY: reads mpi-sys's copy of MPI_STATUS_IGNORE.
    if status == unsafe { RSMPI_STATUS_IGNORE } {
        own
    } else {
        status
    }
}

/// The status of a receive from `MPI_PROC_NULL` (MPI 4.1, 3.11): MPI
/// 4.0 in MPICH leaves it unset when the receive is polled.
fn proc_null_status(st: *mut MPI_Status) {
    // SAFETY: reads mpi-sys's copies of the constants; st is the user's
    // status or ours, or MPI_STATUS_IGNORE (skipped).
    unsafe {
        if st == RSMPI_STATUS_IGNORE {
            return;
        }
        (*st).MPI_SOURCE = RSMPI_PROC_NULL;
        (*st).MPI_TAG = RSMPI_ANY_TAG;
        PMPI_Status_set_elements(st, crate::mpi::byte(), 0);
        PMPI_Status_set_cancelled(st, 0);
    }
}

/// Whether a send-receive pair is polled (`crate::hang::polled`). One
/// from `MPI_PROC_NULL` is not, but at `MPI_THREAD_MULTIPLE`, where its
/// send must be posted under the lock (`crate::threads`); its status is
/// then written by `proc_null_status`.
fn pair_polled(null_source: bool) -> bool {
    crate::hang::polled() && (!null_source || crate::threads::multiple())
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
    // An error MPI raises in the call comes back here (a truncation is
    // reported before the user's handler sees it: crate::mpi::errhandler).
    let errhandler::Outcome { rc, err, caught } = match key {
        Some(_) => errhandler::deferred(|| f(st)),
        None => {
            let rc = f(st);
            errhandler::Outcome {
                rc,
                err: rc,
                caught: None,
            }
        }
    };
    if err != 0 {
        unsent(send);
        if key.is_some() && errhandler::truncated(err) {
            // SAFETY: MPI wrote the status of the message it matched.
            truncated(key, unsafe { &*st });
        } else {
            not_posted(key);
        }
        return errhandler::hand_on(caught, rc);
    }
    match key {
        // SAFETY: MPI wrote the status.
        Some(_) => received(key, unsafe { &*st }).err().unwrap_or(rc),
        None => rc,
    }
}

macro_rules! recv {
    ($(#[$m:meta])* $name:ident, $pmpi:ident, $ipmpi:ident, $label:expr, $cnt:ty) => {
$(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
    buf: *mut c_void,
    count: $cnt,
    t: Dt,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    // Queued and posted under the one lock (crate::threads).
    let _s = crate::threads::enter();
    let key = receiving($label, comm, source, tag, count, t);
    // SAFETY: the user's arguments; the status is the user's or ours.
    checked_receive(key, None, status, |st| unsafe {
        // (MPICH 4.0 leaves a polled MPI_PROC_NULL receive's status unset;
        // a blocking one returns at once.)
        if crate::hang::polled() && source != super::proc_null() {
            crate::hang::one($label, crate::hang::Kind::Recv, comm, source, tag, st, |r| {
                $ipmpi(buf, count, t, source, tag, comm, r)
            })
        } else {
            $pmpi(buf, count, t, source, tag, comm, st)
        }
    })
}
    };
}

recv!(MPI_Recv, PMPI_Recv, PMPI_Irecv, "MPI_Recv", c_int);

macro_rules! irecv {
    ($(#[$m:meta])* $name:ident, $pmpi:ident, $label:expr, $cnt:ty) => {
$(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
    buf: *mut c_void,
    count: $cnt,
    t: Dt,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let _s = crate::threads::enter();
    let key = receiving($label, comm, source, tag, count, t);
    // SAFETY: the user's arguments, unchanged.
    let rc = unsafe { $pmpi(buf, count, t, source, tag, comm, request) };
    if rc != 0 {
        not_posted(key);
    } else {
        // SAFETY: MPI wrote the request.
        attach(key, unsafe { *request });
        // SAFETY: as above.
        crate::hang::made(unsafe { *request }, $label, crate::hang::Kind::Recv,
            comm, source, tag, false);
    }
    rc
}
    };
}

irecv!(MPI_Irecv, PMPI_Irecv, "MPI_Irecv", c_int);

macro_rules! sendrecv {
    ($(#[$m:meta])* $name:ident, $pmpi:ident, $irecv:ident, $isend:ident, $label:expr, $cnt:ty) => {
$(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
    sendbuf: *const c_void,
    sendcount: $cnt,
    sendtype: Dt,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: $cnt,
    recvtype: Dt,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    // Its companion stays when the call fails: the error may be the
    // receive's (a truncation) with the message sent, and a message
    // without its companion would leave its receiver waiting for one.
    let _s = crate::threads::enter();
    let _ = sent(comm, dest, sendtag, sendcount, sendtype);
    let key = receiving($label, comm, source, recvtag, recvcount, recvtype);
    let null_source = source == super::proc_null();
    // SAFETY: the user's arguments; the status is the user's or ours.
    checked_receive(key, None, status, |st| unsafe {
        if pair_polled(null_source) {
            let rc = crate::hang::pair(
                $label, comm, dest, sendtag, source, recvtag, st,
                |r| $irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, r),
                |r| $isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, r),
            );
            if null_source && rc == 0 {
                proc_null_status(st);
            }
            rc
        } else {
            $pmpi(
                sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                source, recvtag, comm, st,
            )
        }
    })
}
    };
}

sendrecv!(
    MPI_Sendrecv,
    PMPI_Sendrecv,
    PMPI_Irecv,
    PMPI_Isend,
    "MPI_Sendrecv",
    c_int
);

macro_rules! sendrecv_replace {
    ($(#[$m:meta])* $name:ident, $pmpi:ident, $label:expr, $cnt:ty) => {
$(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
    buf: *mut c_void,
    count: $cnt,
    t: Dt,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    // As in MPI_Sendrecv, the companion stays when the call fails.
    let _s = crate::threads::enter();
    let _ = sent(comm, dest, sendtag, count, t);
    let key = receiving($label, comm, source, recvtag, count, t);
    let null_source = source == super::proc_null();
    // SAFETY: the user's arguments; the status is the user's or ours.
    checked_receive(key, None, status, |st| unsafe {
        let n: i64 = count.into();
        let polled = match c_int::try_from(n) {
            Ok(n) if pair_polled(null_source) => {
                crate::hang::sendrecv_replace(buf, n, t, dest, sendtag, source, recvtag, comm, st)
            }
            _ => None,
        };
        match polled {
            Some(rc) => {
                if null_source && rc == 0 {
                    proc_null_status(st);
                }
                rc
            }
            None => {
                // Blocking (a count past int, or a type MPI cannot pack):
                // the lock goes first (crate::threads; such a call on
                // two threads with one (destination, tag) is not ordered).
                crate::threads::release();
                $pmpi(buf, count, t, dest, sendtag, source, recvtag, comm, st)
            }
        }
    })
}
    };
}

sendrecv_replace!(
    MPI_Sendrecv_replace,
    PMPI_Sendrecv_replace,
    "MPI_Sendrecv_replace",
    c_int
);

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
    if !crate::hang::polled() {
        // SAFETY: the user's arguments; st is the user's status or ours.
        let rc = unsafe { PMPI_Mprobe(source, tag, comm, message, st) };
        if rc == 0 {
            // SAFETY: MPI wrote the status and the message.
            unsafe { super::matched(comm, &*st, *message) };
        }
        return rc;
    }
    // Each attempt matches and queues under the one lock
    // (crate::threads): the message's place is taken as MPI gives it.
    let attempt = || {
        let _s = crate::threads::enter();
        let mut flag: c_int = 0;
        // SAFETY: the user's arguments; st is the user's status or ours.
        let rc = unsafe { PMPI_Improbe(source, tag, comm, &mut flag, message, st) };
        if rc == 0 && flag != 0 {
            // SAFETY: MPI wrote the status and the message.
            unsafe { super::matched(comm, &*st, *message) };
        }
        (rc, flag != 0)
    };
    crate::hang::mprobe(source, tag, comm, attempt)
}

/// `MPI_Probe` takes no message (no check): wrapped to wait visibly.
#[no_mangle]
pub unsafe extern "C" fn MPI_Probe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the user's arguments.
    unsafe {
        if crate::hang::on() && source != super::proc_null() {
            crate::hang::probe(source, tag, comm, status)
        } else {
            PMPI_Probe(source, tag, comm, status)
        }
    }
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
    let _s = crate::threads::enter();
    // SAFETY: the user's arguments; st is the user's status or ours.
    let rc = unsafe { PMPI_Improbe(source, tag, comm, flag, message, st) };
    // SAFETY: MPI wrote flag (and, when set, the status and the message).
    if rc == 0 && unsafe { *flag } != 0 {
        // SAFETY: as above.
        unsafe { super::matched(comm, &*st, *message) };
    }
    rc
}

macro_rules! mrecv {
    ($(#[$m:meta])* $name:ident, $pmpi:ident, $ipmpi:ident, $label:expr, $cnt:ty) => {
$(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
    buf: *mut c_void,
    count: $cnt,
    t: Dt,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    let _s = crate::threads::enter();
    // SAFETY: the user's message handle.
    let key = super::receiving_matched($label, unsafe { *message }, count, t);
    // SAFETY: the user's arguments; the status is the user's or ours.
    checked_receive(key, None, status, |st| unsafe {
        if crate::hang::polled() {
            let comm = RSMPI_COMM_NULL;
            crate::hang::one($label, crate::hang::Kind::Matched, comm, 0, 0, st, |r| {
                $ipmpi(buf, count, t, message, r)
            })
        } else {
            $pmpi(buf, count, t, message, st)
        }
    })
}
    };
}

mrecv!(MPI_Mrecv, PMPI_Mrecv, PMPI_Imrecv, "MPI_Mrecv", c_int);

macro_rules! imrecv {
    ($(#[$m:meta])* $name:ident, $pmpi:ident, $label:expr, $cnt:ty) => {
$(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
    buf: *mut c_void,
    count: $cnt,
    t: Dt,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
) -> c_int {
    let _s = crate::threads::enter();
    // SAFETY: the user's message handle.
    let key = super::receiving_matched($label, unsafe { *message }, count, t);
    // SAFETY: the user's arguments, unchanged.
    let rc = unsafe { $pmpi(buf, count, t, message, request) };
    if rc != 0 {
        not_posted(key);
    } else {
        // SAFETY: MPI wrote the request.
        attach(key, unsafe { *request });
    }
    rc
}
    };
}

imrecv!(MPI_Imrecv, PMPI_Imrecv, "MPI_Imrecv", c_int);

// ---- persistent requests: a companion or a queued receive per start ----

send_with_request!(MPI_Send_init, PMPI_Send_init, true, c_int);
send_with_request!(MPI_Ssend_init, PMPI_Ssend_init, true, c_int);
send_with_request!(MPI_Bsend_init, PMPI_Bsend_init, true, c_int);
send_with_request!(MPI_Rsend_init, PMPI_Rsend_init, true, c_int);

macro_rules! recv_init {
    ($(#[$m:meta])* $name:ident, $pmpi:ident, $label:expr, $cnt:ty) => {
$(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
    buf: *mut c_void,
    count: $cnt,
    t: Dt,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the user's arguments, unchanged.
    let rc = unsafe { $pmpi(buf, count, t, source, tag, comm, request) };
    if rc == 0 {
        // SAFETY: MPI wrote the request.
        super::persistent_made(true, comm, source, tag, count, t, unsafe { *request });
        // SAFETY: as above.
        crate::hang::made(unsafe { *request }, $label, crate::hang::Kind::Recv,
            comm, source, tag, true);
    }
    rc
}
    };
}

recv_init!(MPI_Recv_init, PMPI_Recv_init, "MPI_Recv_init", c_int);

#[no_mangle]
pub unsafe extern "C" fn MPI_Start(request: *mut MPI_Request) -> c_int {
    let _s = crate::threads::enter();
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
    let _s = crate::threads::enter();
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

// ---- the MPI-4 large-count forms (`MPI_Send_c`, …: counts as
// `MPI_Count`), where mpi.h declares them, with the same checks ----

blocking_send!(
    #[cfg(mpi_large_count)]
    MPI_Send_c,
    PMPI_Send_c,
    PMPI_Isend_c,
    MPI_Count
);
blocking_send!(
    #[cfg(mpi_large_count)]
    MPI_Ssend_c,
    PMPI_Ssend_c,
    PMPI_Issend_c,
    MPI_Count
);
blocking_send!(
    #[cfg(mpi_large_count)]
    MPI_Bsend_c,
    PMPI_Bsend_c,
    PMPI_Ibsend_c,
    MPI_Count
);
blocking_send!(
    #[cfg(mpi_large_count)]
    MPI_Rsend_c,
    PMPI_Rsend_c,
    PMPI_Irsend_c,
    MPI_Count
);
send_with_request!(
    #[cfg(mpi_large_count)]
    MPI_Isend_c,
    PMPI_Isend_c,
    false,
    MPI_Count
);
send_with_request!(
    #[cfg(mpi_large_count)]
    MPI_Issend_c,
    PMPI_Issend_c,
    false,
    MPI_Count
);
send_with_request!(
    #[cfg(mpi_large_count)]
    MPI_Ibsend_c,
    PMPI_Ibsend_c,
    false,
    MPI_Count
);
send_with_request!(
    #[cfg(mpi_large_count)]
    MPI_Irsend_c,
    PMPI_Irsend_c,
    false,
    MPI_Count
);
send_with_request!(
    #[cfg(mpi_large_count)]
    MPI_Send_init_c,
    PMPI_Send_init_c,
    true,
    MPI_Count
);
send_with_request!(
    #[cfg(mpi_large_count)]
    MPI_Ssend_init_c,
    PMPI_Ssend_init_c,
    true,
    MPI_Count
);
send_with_request!(
    #[cfg(mpi_large_count)]
    MPI_Bsend_init_c,
    PMPI_Bsend_init_c,
    true,
    MPI_Count
);
send_with_request!(
    #[cfg(mpi_large_count)]
    MPI_Rsend_init_c,
    PMPI_Rsend_init_c,
    true,
    MPI_Count
);
recv!(
    #[cfg(mpi_large_count)]
    MPI_Recv_c,
    PMPI_Recv_c,
    PMPI_Irecv_c,
    "MPI_Recv_c",
    MPI_Count
);
irecv!(
    #[cfg(mpi_large_count)]
    MPI_Irecv_c,
    PMPI_Irecv_c,
    "MPI_Irecv_c",
    MPI_Count
);
recv_init!(
    #[cfg(mpi_large_count)]
    MPI_Recv_init_c,
    PMPI_Recv_init_c,
    "MPI_Recv_init_c",
    MPI_Count
);
sendrecv!(
    #[cfg(mpi_large_count)]
    MPI_Sendrecv_c,
    PMPI_Sendrecv_c,
    PMPI_Irecv_c,
    PMPI_Isend_c,
    "MPI_Sendrecv_c",
    MPI_Count
);
sendrecv_replace!(
    #[cfg(mpi_large_count)]
    MPI_Sendrecv_replace_c,
    PMPI_Sendrecv_replace_c,
    "MPI_Sendrecv_replace_c",
    MPI_Count
);
mrecv!(
    #[cfg(mpi_large_count)]
    MPI_Mrecv_c,
    PMPI_Mrecv_c,
    PMPI_Imrecv_c,
    "MPI_Mrecv_c",
    MPI_Count
);
imrecv!(
    #[cfg(mpi_large_count)]
    MPI_Imrecv_c,
    PMPI_Imrecv_c,
    "MPI_Imrecv_c",
    MPI_Count
);

// ---- MPI-4 nonblocking Sendrecv: a companion now, the receive queued
// under the request (declared wherever the large-count forms are) ----

macro_rules! isendrecv {
    ($(#[$m:meta])* $name:ident, $pmpi:ident, $label:expr, $cnt:ty) => {
        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            sendbuf: *const c_void,
            sendcount: $cnt,
            sendtype: Dt,
            dest: c_int,
            sendtag: c_int,
            recvbuf: *mut c_void,
            recvcount: $cnt,
            recvtype: Dt,
            source: c_int,
            recvtag: c_int,
            comm: MPI_Comm,
            request: *mut MPI_Request,
        ) -> c_int {
            let send = sent(comm, dest, sendtag, sendcount, sendtype);
            let key =
                super::receiving_unreported($label, comm, source, recvtag, recvcount, recvtype);
            // SAFETY: the user's arguments, unchanged.
            let rc = unsafe {
                $pmpi(
                    sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                    source, recvtag, comm, request,
                )
            };
            if rc != 0 {
                // A nonblocking start that fails posts neither half.
                unsent(send);
                not_posted(key);
            } else {
                // SAFETY: MPI wrote the request.
                attach(key, unsafe { *request });
                // SAFETY: as above (the receive's half named).
                crate::hang::made(unsafe { *request }, $label, crate::hang::Kind::Recv,
                    comm, source, recvtag, false);
            }
            rc
        }
    };
}

macro_rules! isendrecv_replace {
    ($(#[$m:meta])* $name:ident, $pmpi:ident, $label:expr, $cnt:ty) => {
        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            buf: *mut c_void,
            count: $cnt,
            t: Dt,
            dest: c_int,
            sendtag: c_int,
            source: c_int,
            recvtag: c_int,
            comm: MPI_Comm,
            request: *mut MPI_Request,
        ) -> c_int {
            let send = sent(comm, dest, sendtag, count, t);
            let key = super::receiving_unreported($label, comm, source, recvtag, count, t);
            // SAFETY: the user's arguments, unchanged.
            let rc = unsafe { $pmpi(buf, count, t, dest, sendtag, source, recvtag, comm, request) };
            if rc != 0 {
                unsent(send);
                not_posted(key);
            } else {
                // SAFETY: MPI wrote the request.
                attach(key, unsafe { *request });
                // SAFETY: as above (the receive's half named).
                crate::hang::made(unsafe { *request }, $label, crate::hang::Kind::Recv,
                    comm, source, recvtag, false);
            }
            rc
        }
    };
}

isendrecv!(
    #[cfg(mpi_large_count)]
    MPI_Isendrecv,
    PMPI_Isendrecv,
    "MPI_Isendrecv",
    c_int
);
isendrecv!(
    #[cfg(mpi_large_count)]
    MPI_Isendrecv_c,
    PMPI_Isendrecv_c,
    "MPI_Isendrecv_c",
    MPI_Count
);
isendrecv_replace!(
    #[cfg(mpi_large_count)]
    MPI_Isendrecv_replace,
    PMPI_Isendrecv_replace,
    "MPI_Isendrecv_replace",
    c_int
);
isendrecv_replace!(
    #[cfg(mpi_large_count)]
    MPI_Isendrecv_replace_c,
    PMPI_Isendrecv_replace_c,
    "MPI_Isendrecv_replace_c",
    MPI_Count
);
