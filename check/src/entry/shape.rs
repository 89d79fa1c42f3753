//! What the table's collective shapes (`calls.txt`: coll, checked,
//! started, plain) do around a call, and the helpers its `check:` and
//! `then:` lines use to describe a call from its arguments.

use crate::batch::Checked;
use crate::check::{self, Call};
use crate::hang::Kind;
use crate::mpi;
use crate::record::{hash_words, Coll, Form};
use crate::sys::*;
use std::ffi::{c_char, c_int, c_void};

pub(crate) use crate::mpi::{is_in_place, Object};

type Dt = MPI_Datatype;

/// A blocking call: checked before it is made; a failed check returns the
/// error handler's code instead (when the handler returns). A receive
/// buffer with overlapping entries (`crate::datatypes`) is reported
/// first; the call is still made (the other ranks are in it), and returns
/// the handler's code. A datatype argument MPI cannot use is reported,
/// then the call is made without its checks (they would read the type)
/// and MPI's own error follows.
pub(crate) fn checked(mut call: Call, pmpi: impl FnOnce() -> c_int) -> c_int {
    if !crate::datatypes::collective_usable(&call) {
        return pmpi();
    }
    let buffer = crate::datatypes::collective_buffer(&call);
    let comm = call.comm;
    let rc = match crate::batch::blocking(&mut call) {
        Err(rc) => return rc,
        Ok(Checked::Verified) => pmpi(),
        Ok(Checked::Recorded) => crate::batch::made(comm, pmpi),
    };
    match buffer {
        Err(code) if rc == 0 => code,
        _ => rc,
    }
}

/// A nonblocking or persistent call (`name`): its check started before
/// the call, kept under the request the call returns, which the hang
/// analysis knows until it is freed (a wait on it waits for every rank).
pub(crate) fn started(
    name: &'static str,
    mut call: Call,
    form: Form,
    request: *mut MPI_Request,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    call.form = form;
    let comm = call.comm;
    let rc = start_checked(call, request, pmpi);
    if rc == 0 {
        // SAFETY: MPI wrote the request.
        crate::hang::made(unsafe { *request }, name, Kind::Collective, comm, -1, 0);
    }
    rc
}

fn start_checked(call: Call, request: *mut MPI_Request, pmpi: impl FnOnce() -> c_int) -> c_int {
    if !crate::datatypes::collective_usable(&call) {
        return pmpi();
    }
    // (A finding reached the error handler; the request is the program's
    // to complete, so the call's own code is returned.)
    let _ = crate::datatypes::collective_buffer(&call);
    let p = check::start(call);
    let rc = pmpi();
    if let Some(p) = p {
        if rc == 0 {
            // SAFETY: MPI wrote the request.
            check::attach(unsafe { *request }, p);
        }
    }
    rc
}

pub(crate) fn base(coll: Coll, comm: MPI_Comm) -> Call {
    Call::new(coll, comm)
}

/// `MPI_Comm_dup`: the program's, or the type exchange's first call on
/// `comm` (checked as that call: `Coll::ExchangeSetup`).
pub(crate) fn comm_dup(comm: MPI_Comm) -> Call {
    match mpix_marshal::library_collective_point() {
        Some(op) => Call {
            operation: Some(op),
            ..Call::new(Coll::ExchangeSetup, comm)
        },
        None => Call::new(Coll::CommDup, comm),
    }
}

pub(crate) fn send_recv(
    coll: Coll,
    comm: MPI_Comm,
    sendbuf: *const c_void,
    scount: impl Into<i64>,
    stype: Dt,
    rcount: impl Into<i64>,
    rtype: Dt,
) -> Call {
    Call {
        in_place: mpi::is_in_place(sendbuf),
        scount: scount.into(),
        stype,
        rcount: rcount.into(),
        rtype,
        ..base(coll, comm)
    }
}

pub(crate) fn reduction(
    coll: Coll,
    comm: MPI_Comm,
    sendbuf: *const c_void,
    count: impl Into<i64>,
    t: Dt,
    op: MPI_Op,
) -> Call {
    Call {
        in_place: mpi::is_in_place(sendbuf),
        scount: count.into(),
        stype: t,
        op: Some(op),
        ..base(coll, comm)
    }
}

/// A large-count (`_c`) form: the same checks, its own name in reports.
#[cfg_attr(not(mpi_large_count), allow(dead_code))]
pub(crate) fn large(call: Call) -> Call {
    Call {
        large: true,
        ..call
    }
}

/// A neighborhood collective's arguments.
pub(crate) fn neighbor<C: Into<i64>>(
    coll: Coll,
    comm: MPI_Comm,
    send: (C, Dt),
    recv: (C, Dt),
) -> Call {
    Call {
        scount: send.0.into(),
        stype: send.1,
        rcount: recv.0.into(),
        rtype: recv.1,
        ..base(coll, comm)
    }
}

/// A new communicator gets its private duplicate now, while all its
/// members are in the call that made it.
pub(crate) fn made(rc: c_int, parent: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
    let library_owned = mpix_marshal::library_collective_point().is_some();
    if rc == 0 && !newcomm.is_null() && !crate::internal::active() && !library_owned {
        // SAFETY: MPI wrote the new communicator.
        let c = unsafe { *newcomm };
        mpi::state(c);
        crate::p2p::setup(c, Some(parent));
        crate::hang::known(c);
    }
    rc
}

/// The hash of a Cartesian topology's dims and periods (which must agree).
pub(crate) fn cart_words(ndims: c_int, dims: *const c_int, periods: *const c_int) -> u64 {
    let n = ndims.max(0) as usize;
    let words = (0..n).flat_map(|i| {
        // SAFETY: dims and periods have ndims entries (MPI requires it).
        unsafe { [*dims.add(i) as u64, *periods.add(i) as u64] }
    });
    hash_words(std::iter::once(n as u64).chain(words))
}

/// The hash of a graph topology's index and edges (which must agree).
pub(crate) fn graph_words(nnodes: c_int, index: *const c_int, edges: *const c_int) -> u64 {
    let n = nnodes.max(0) as usize;
    // SAFETY: index has nnodes entries, edges index[nnodes - 1] (MPI requires it).
    let nedges = if n > 0 {
        unsafe { *index.add(n - 1) }.max(0) as usize
    } else {
        0
    };
    // SAFETY: as above.
    let idx = (0..n).map(|i| unsafe { *index.add(i) } as u64);
    // SAFETY: as above.
    let e = (0..nedges).map(|i| unsafe { *edges.add(i) } as u64);
    hash_words(std::iter::once(n as u64).chain(idx).chain(e))
}

/// A C string argument's bytes (empty for a null pointer).
pub(crate) fn c_bytes(p: *const c_char) -> Vec<u8> {
    if p.is_null() {
        return Vec::new();
    }
    // SAFETY: MPI requires its string arguments to be NUL-terminated.
    unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes().to_vec()
}

/// The hash of a C string argument (which must agree).
pub(crate) fn string_hash(p: *const c_char) -> u64 {
    hash_words(c_bytes(p).iter().map(|&b| b as u64))
}

/// A window or file call: checked on the object's own private duplicate.
pub(crate) fn on_object(coll: Coll, object: Object) -> Call {
    Call {
        object: Some(object),
        ..base(coll, mpi::comm_null())
    }
}

/// A window made collectively on `comm` gets its checker state.
pub(crate) fn window_made(
    rc: c_int,
    win: *mut MPI_Win,
    comm: MPI_Comm,
    local: Option<(MPI_Aint, c_int)>,
) -> c_int {
    if rc == 0 && !win.is_null() {
        // SAFETY: MPI wrote the window.
        let w = unsafe { *win };
        mpi::object_made(w, comm, mpi::win_label(w, comm));
        crate::rma::window_made(w, local);
    }
    rc
}
