//! Persistent requests: what each start posts on the checker's side.

use super::channels::channel;
use super::companions::{attach_send, proc_null, sent, unsent};
use super::completion::{claim, tracking};
use super::counts::{send_done, send_posted};
use super::matching::{attach, not_posted, receive_freed, receiving};
use crate::mpi;
use crate::report::p2p_enabled as enabled;
use crate::sys::*;
use std::ffi::c_int;
use std::sync::{Mutex, OnceLock};

/// What a start posted on the checker's side: a receive's key or a send's
/// companion's.
#[derive(Clone, Copy, Default)]
pub struct Starting {
    pub(super) recv: Option<(usize, u64)>,
    pub(super) send: Option<u64>,
}

/// What a persistent point-to-point request does at each start. Its
/// datatype is the checker's duplicate of a derived type (the user may
/// free its own handle while the request lives).
#[derive(Clone, Copy)]
pub(super) enum Persistent {
    Send {
        comm: MPI_Comm,
        peer: c_int,
        tag: c_int,
        count: i64,
        datatype: MPI_Datatype,
        owned: bool,
    },
    Recv {
        comm: MPI_Comm,
        peer: c_int,
        tag: c_int,
        count: i64,
        datatype: MPI_Datatype,
        owned: bool,
    },
}

pub(super) struct PersistentEntry(u64, Persistent);

// SAFETY: plain handles.
unsafe impl Send for PersistentEntry {}

pub(super) fn persistent() -> &'static Mutex<Vec<PersistentEntry>> {
    static P: OnceLock<Mutex<Vec<PersistentEntry>>> = OnceLock::new();
    P.get_or_init(Default::default)
}

/// A persistent send (`recv` false) or receive was made on `comm`: kept
/// under its request when `comm` has a channel.
pub fn persistent_made(
    recv: bool,
    comm: MPI_Comm,
    peer: c_int,
    tag: c_int,
    count: impl Into<i64>,
    t: MPI_Datatype,
    request: MPI_Request,
) {
    let _s = crate::threads::enter();
    if peer == proc_null() || channel(comm).is_none() {
        return;
    }
    let (datatype, owned) = if mpi::is_named(t) {
        (t, false)
    } else {
        let mut d = t;
        // SAFETY: duplicates the user's committed type (a local call).
        if unsafe { PMPI_Type_dup(t, &mut d) } != 0 {
            return;
        }
        (d, true)
    };
    let count = count.into();
    let p = if recv {
        Persistent::Recv {
            comm,
            peer,
            tag,
            count,
            datatype,
            owned,
        }
    } else {
        Persistent::Send {
            comm,
            peer,
            tag,
            count,
            datatype,
            owned,
        }
    };
    let mut v = persistent().lock().unwrap_or_else(|e| e.into_inner());
    v.push(PersistentEntry(mpi::bits(request), p));
}

pub(super) fn persistent_of(request: MPI_Request) -> Option<Persistent> {
    let v = persistent().lock().unwrap_or_else(|e| e.into_inner());
    v.iter().find(|e| e.0 == mpi::bits(request)).map(|e| e.1)
}

/// Before `MPI_Start` of `request`: a send's companion, or a receive
/// queued. The key to `started` after the user's call.
pub fn starting(request: MPI_Request) -> Starting {
    let _s = crate::threads::enter();
    if !enabled() {
        return Starting::default();
    }
    let Some(p) = persistent_of(request) else {
        return Starting::default();
    };
    match p {
        Persistent::Send {
            comm,
            peer,
            tag,
            count,
            datatype,
            ..
        } => {
            // A start that fails posts no message: its companion goes too.
            Starting {
                recv: None,
                send: sent(comm, peer, tag, count, datatype),
            }
        }
        Persistent::Recv {
            comm,
            peer,
            tag,
            count,
            datatype,
            ..
        } => Starting {
            recv: receiving("MPI_Recv_init", comm, peer, tag, count, datatype),
            send: None,
        },
    }
}

/// After `MPI_Start`: the receive's key under its request (or dropped
/// when the start failed).
pub fn started(s: Starting, rc: c_int, request: MPI_Request) {
    let _s = crate::threads::enter();
    if rc != 0 {
        unsent(s.send);
        not_posted(s.recv);
    } else {
        attach_send(s.send, request);
        attach(s.recv, request);
        if s.send.is_some() {
            if let Some(Persistent::Send {
                comm,
                peer,
                tag,
                count,
                datatype,
                ..
            }) = persistent_of(request)
            {
                send_posted("MPI_Start", request, comm, peer, tag, count, datatype);
            }
        }
    }
}

/// Before `MPI_Request_free`: a persistent request's record and type go.
pub fn request_freed(request: MPI_Request) {
    let _s = crate::threads::enter();
    if !enabled() {
        return;
    }
    if tracking() {
        if let Some(k) = claim(&[mpi::bits(request)])[0] {
            receive_freed(k);
        }
        send_done(mpi::bits(request));
    }
    let mut v = persistent().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = v.iter().position(|e| e.0 == mpi::bits(request)) {
        let (Persistent::Send {
            datatype, owned, ..
        }
        | Persistent::Recv {
            datatype, owned, ..
        }) = v.swap_remove(i).1;
        if owned {
            mpi::free_type(datatype);
        }
    }
}
