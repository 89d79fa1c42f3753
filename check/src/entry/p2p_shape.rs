//! What the table's point-to-point shapes (`calls.txt`: send, recv,
//! sendrecv, sendrecv_replace, mrecv) do around a call: each send posts
//! its companion, each receive queues its check, around the unchanged
//! `PMPI_` call (see `crate::p2p`). With the point-to-point checks off,
//! or on a communicator without a channel, each is its `PMPI_` call and
//! nothing else, but for the check of a receive's own buffer type
//! (`crate::datatypes`), made first. At `MPI_THREAD_MULTIPLE` the
//! companion (or queued receive) and the message are posted under the one
//! lock (`crate::threads`).

use crate::datatypes;
use crate::hang::{self, Kind};
use crate::mpi::errhandler;
use crate::p2p::{
    self, attach, attach_send, not_posted, received, receiving, sent, status_or, truncated, unsent,
};
use crate::polled;
use crate::sys::*;
use crate::threads;
use crate::types::TypeArg;
use std::ffi::{c_int, c_void};

/// One message's envelope and type, as a send or a receive names it.
pub(crate) struct Msg {
    pub comm: MPI_Comm,
    /// The destination of a send, the source of a receive.
    pub peer: c_int,
    pub tag: c_int,
    pub count: i64,
    pub datatype: MPI_Datatype,
}

impl Msg {
    /// Its datatype argument, named `name` in the call.
    fn type_arg(&self, name: &'static str) -> TypeArg {
        TypeArg {
            name: name.into(),
            count: self.count,
            datatype: self.datatype,
        }
    }

    /// Whether its datatype is one MPI can use (else reported: the call
    /// is then made without its checks, and MPI's own error follows).
    fn usable(&self, call: &str) -> bool {
        datatypes::usable(call, self.comm, &[self.type_arg("datatype")])
    }
}

/// Keeps the call's site for a receive it completes whose check runs
/// later (the batched point-to-point checks).
#[inline(always)]
fn entering(name: &'static str) -> Option<crate::site::Entered> {
    p2p::batched().then(|| crate::site::entering(name))
}

/// A blocking send; polled through its nonblocking form `ipmpi` when
/// blocking calls are polled (`crate::hang`).
pub(crate) fn send(
    name: &'static str,
    m: Msg,
    pmpi: impl FnOnce() -> c_int,
    ipmpi: impl FnOnce(*mut MPI_Request) -> c_int,
) -> c_int {
    if !m.usable(name) {
        return pmpi();
    }
    let _s = threads::enter();
    let key = sent(m.comm, m.peer, m.tag, m.count, m.datatype);
    let rc = if hang::polled() {
        // SAFETY: the user's arguments, in the nonblocking form, polled.
        unsafe {
            let ignore = RSMPI_STATUS_IGNORE;
            polled::one(name, Kind::Send, m.comm, m.peer, m.tag, ignore, ipmpi)
        }
    } else {
        pmpi()
    };
    if rc != 0 {
        unsent(key);
    }
    rc
}

/// A send that returns a request: nonblocking (its companion now) or
/// persistent (a companion at each start).
pub(crate) fn send_request(
    name: &'static str,
    persistent: bool,
    m: Msg,
    request: *mut MPI_Request,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    if !m.usable(name) {
        return pmpi();
    }
    let _s = threads::enter();
    let key = match persistent {
        true => None,
        false => sent(m.comm, m.peer, m.tag, m.count, m.datatype),
    };
    let rc = pmpi();
    if rc != 0 {
        unsent(key);
        return rc;
    }
    // SAFETY: MPI wrote the request.
    let r = unsafe { *request };
    if !persistent {
        attach_send(key, r);
        if key.is_some() {
            p2p::send_posted(name, r, m.comm, m.peer, m.tag, m.count, m.datatype);
        }
    }
    hang::made(r, name, Kind::Send, m.comm, m.peer, m.tag);
    if persistent {
        p2p::persistent_made(false, m.comm, m.peer, m.tag, m.count, m.datatype, r);
    }
    rc
}

/// The receive buffer's own check, before anything is posted: Err(the
/// code the user's error handler got) when its type's entries overlap.
fn buffer_checked(name: &'static str, m: &Msg) -> Result<(), c_int> {
    datatypes::receive_buffer(name, m.comm, m.count, m.datatype)
}

/// The status of a receive from `MPI_PROC_NULL` (MPI 4.1, 3.11): MPI
/// 4.0 in MPICH leaves it unset when the receive is polled.
fn proc_null_status(st: *mut MPI_Status) {
    // SAFETY: reads our bindings' copies of the constants; st is the
    // user's status or ours, or MPI_STATUS_IGNORE (skipped).
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
    hang::polled() && (!null_source || threads::multiple())
}

/// Runs a blocking receive `f` with the user's status, or ours where the
/// user ignores it and the receive is checked, then checks it.
fn checked_receive(
    key: Option<(usize, u64)>,
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

/// A blocking receive; polled through its nonblocking form `ipmpi` when
/// blocking calls are polled.
pub(crate) fn recv(
    name: &'static str,
    m: Msg,
    status: *mut MPI_Status,
    pmpi: impl FnOnce(*mut MPI_Status) -> c_int,
    ipmpi: impl FnOnce(*mut MPI_Request) -> c_int,
) -> c_int {
    let _site = entering(name);
    if !m.usable(name) {
        return pmpi(status);
    }
    if let Err(rc) = buffer_checked(name, &m) {
        return rc;
    }
    let _s = threads::enter();
    let key = receiving(name, m.comm, m.peer, m.tag, m.count, m.datatype);
    checked_receive(key, status, |st| {
        // (MPICH 4.0 leaves a polled MPI_PROC_NULL receive's status unset;
        // a blocking one returns at once.)
        if hang::polled() && m.peer != p2p::proc_null() {
            // SAFETY: the user's arguments; the status is the user's or ours.
            unsafe { polled::one(name, Kind::Recv, m.comm, m.peer, m.tag, st, ipmpi) }
        } else {
            pmpi(st)
        }
    })
}

pub(crate) fn irecv(
    name: &'static str,
    m: Msg,
    request: *mut MPI_Request,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    if !m.usable(name) {
        return pmpi();
    }
    if let Err(rc) = buffer_checked(name, &m) {
        return rc;
    }
    let _s = threads::enter();
    let key = receiving(name, m.comm, m.peer, m.tag, m.count, m.datatype);
    let rc = pmpi();
    receive_started(name, key, rc, request, &m)
}

/// A nonblocking receive's start: its queued check goes under the
/// request MPI wrote, or away when the start failed.
fn receive_started(
    name: &'static str,
    key: Option<(usize, u64)>,
    rc: c_int,
    request: *mut MPI_Request,
    m: &Msg,
) -> c_int {
    if rc != 0 {
        not_posted(key);
        return rc;
    }
    // SAFETY: MPI wrote the request.
    let r = unsafe { *request };
    attach(key, r);
    hang::made(r, name, Kind::Recv, m.comm, m.peer, m.tag);
    rc
}

/// A persistent receive: a queued receive at each start.
pub(crate) fn recv_init(
    name: &'static str,
    m: Msg,
    request: *mut MPI_Request,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    if !m.usable(name) {
        return pmpi();
    }
    if let Err(rc) = buffer_checked(name, &m) {
        return rc;
    }
    let rc = pmpi();
    if rc == 0 {
        // SAFETY: MPI wrote the request.
        let r = unsafe { *request };
        p2p::persistent_made(true, m.comm, m.peer, m.tag, m.count, m.datatype, r);
        hang::made(r, name, Kind::Recv, m.comm, m.peer, m.tag);
    }
    rc
}

/// `MPI_Sendrecv`: polled as a pair of nonblocking calls when blocking
/// calls are polled.
pub(crate) fn sendrecv(
    name: &'static str,
    s: Msg,
    r: Msg,
    status: *mut MPI_Status,
    pmpi: impl FnOnce(*mut MPI_Status) -> c_int,
    irecv: impl FnOnce(*mut MPI_Request) -> c_int,
    isend: impl FnOnce(*mut MPI_Request) -> c_int,
) -> c_int {
    let _site = entering(name);
    let polled = |st| {
        // SAFETY: the user's arguments; the status is the user's or ours.
        Some(unsafe { polled::pair(name, s.comm, s.peer, s.tag, r.peer, r.tag, st, irecv, isend) })
    };
    pair(name, &s, &r, status, polled, pmpi)
}

/// `MPI_Sendrecv_replace`: as `MPI_Sendrecv`, polled through the
/// checker's own buffer where it can be (a count within int, a type MPI
/// can pack).
pub(crate) fn sendrecv_replace(
    name: &'static str,
    buf: *mut c_void,
    s: Msg,
    r: Msg,
    status: *mut MPI_Status,
    pmpi: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    let _site = entering(name);
    let polled = |st| {
        let n = c_int::try_from(s.count).ok()?;
        // SAFETY: the user's arguments; the status is the user's or ours.
        unsafe {
            polled::sendrecv_replace(buf, n, s.datatype, s.peer, s.tag, r.peer, r.tag, s.comm, st)
        }
    };
    pair(name, &s, &r, status, polled, pmpi)
}

/// A blocking send-receive: its companion sent and its receive queued
/// under the one lock, then the call, `polled` where blocking calls are
/// (`None`: it cannot be), else `pmpi` without the lock (such a call on
/// two threads with one (destination, tag) is not ordered). Its companion
/// stays when the call fails: the error may be the receive's (a
/// truncation) with the message sent, and a message without its
/// companion would leave its receiver waiting.
fn pair(
    name: &'static str,
    s: &Msg,
    r: &Msg,
    status: *mut MPI_Status,
    polled: impl FnOnce(*mut MPI_Status) -> Option<c_int>,
    pmpi: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    if !pair_usable(name, s, r) {
        return pmpi(status);
    }
    if let Err(rc) = buffer_checked(name, r) {
        return rc;
    }
    let _s = threads::enter();
    let _ = sent(s.comm, s.peer, s.tag, s.count, s.datatype);
    let key = receiving(name, r.comm, r.peer, r.tag, r.count, r.datatype);
    let null_source = r.peer == p2p::proc_null();
    checked_receive(key, status, |st| {
        let rc = if pair_polled(null_source) {
            polled(st)
        } else {
            None
        };
        match rc {
            Some(rc) => {
                if null_source && rc == 0 {
                    proc_null_status(st);
                }
                rc
            }
            None => {
                threads::release();
                pmpi(st)
            }
        }
    })
}

/// `usable` for a send-receive's two halves (one, in the replace form).
fn pair_usable(name: &str, s: &Msg, r: &Msg) -> bool {
    let replace = name.contains("replace");
    let args = match replace {
        true => vec![s.type_arg("datatype")],
        false => vec![s.type_arg("sendtype"), r.type_arg("recvtype")],
    };
    datatypes::usable(name, s.comm, &args)
}

/// The MPI-4 nonblocking send-receive (and its replace form): a
/// companion now, the receive queued under the request.
#[cfg_attr(not(mpi_large_count), allow(dead_code))]
pub(crate) fn isendrecv(
    name: &'static str,
    s: Msg,
    r: Msg,
    request: *mut MPI_Request,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    if !pair_usable(name, &s, &r) {
        return pmpi();
    }
    if let Err(rc) = buffer_checked(name, &r) {
        return rc;
    }
    let send = sent(s.comm, s.peer, s.tag, s.count, s.datatype);
    let key = p2p::receiving_unreported(name, r.comm, r.peer, r.tag, r.count, r.datatype);
    let rc = pmpi();
    if rc != 0 {
        // A nonblocking start that fails posts neither half.
        unsent(send);
    }
    // The receive's half named in hang reports.
    receive_started(name, key, rc, request, &r)
}

/// `usable` for the receive of a matched message (named on
/// `MPI_COMM_WORLD`: the message's communicator is MPI's to know).
fn matched_usable(name: &str, count: i64, datatype: MPI_Datatype) -> bool {
    let m = Msg {
        comm: crate::mpi::comm_world(),
        peer: 0,
        tag: 0,
        count,
        datatype,
    };
    m.usable(name)
}

/// `MPI_Mrecv`: the receive of a message matched by a probe.
pub(crate) fn mrecv(
    name: &'static str,
    count: i64,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
    pmpi: impl FnOnce(*mut MPI_Status) -> c_int,
    ipmpi: impl FnOnce(*mut MPI_Request) -> c_int,
) -> c_int {
    let _site = entering(name);
    if !matched_usable(name, count, datatype) {
        return pmpi(status);
    }
    let _s = threads::enter();
    // SAFETY: the user's message handle.
    let key = p2p::receiving_matched(name, unsafe { *message }, count, datatype);
    checked_receive(key, status, |st| {
        if hang::polled() {
            let comm = crate::mpi::comm_null();
            // SAFETY: the user's arguments; the status is the user's or ours.
            unsafe { polled::one(name, Kind::Matched, comm, 0, 0, st, ipmpi) }
        } else {
            pmpi(st)
        }
    })
}

pub(crate) fn imrecv(
    name: &'static str,
    count: i64,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    if !matched_usable(name, count, datatype) {
        return pmpi();
    }
    let _s = threads::enter();
    // SAFETY: the user's message handle.
    let key = p2p::receiving_matched(name, unsafe { *message }, count, datatype);
    let rc = pmpi();
    if rc != 0 {
        not_posted(key);
    } else {
        // SAFETY: MPI wrote the request.
        attach(key, unsafe { *request });
    }
    rc
}
