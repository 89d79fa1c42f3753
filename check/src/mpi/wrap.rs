//! The interposed MPI functions. Each one builds the call's description,
//! runs the check (`crate::check`), and then makes the call through its
//! `PMPI_` name; a check that fails returns the error handler's code
//! instead (when the handler returns).

#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc)]
#![allow(clippy::too_many_arguments)]
// One description serves a call's int and MPI_Count forms: `.into()` is
// the identity for one of them.
#![allow(clippy::useless_conversion)]

use crate::check::{self, Call};
use crate::mpi;
use crate::record::{hash_words, Coll, Form};
use crate::sys::*;
use std::ffi::{c_char, c_int, c_void};

type Dt = MPI_Datatype;

fn run(call: Call) -> Result<(), c_int> {
    check::blocking(call)
}

macro_rules! checked {
    ($call:expr, $pmpi:expr) => {{
        if let Err(rc) = run($call) {
            return rc;
        }
        // SAFETY: the user's arguments, passed on unchanged.
        unsafe { $pmpi }
    }};
}

/// A nonblocking or persistent call: its check started before the call,
/// kept under the request the call returns.
macro_rules! started {
    ($call:expr, $form:expr, $request:expr, $pmpi:expr) => {{
        let mut c = $call;
        c.form = $form;
        let p = check::start(c);
        // SAFETY: the user's arguments, passed on unchanged.
        let rc = unsafe { $pmpi };
        if let Some(p) = p {
            if rc == 0 {
                // SAFETY: MPI wrote the request.
                check::attach(unsafe { *$request }, p);
            }
        }
        rc
    }};
}

fn base(coll: Coll, comm: MPI_Comm) -> Call {
    Call::new(coll, comm)
}

/// `MPI_Comm_dup`: the program's, or the type exchange's first call on
/// `comm` (checked as that call: `Coll::ExchangeSetup`).
fn comm_dup(comm: MPI_Comm) -> Call {
    match mpix_marshal::library_collective_point() {
        Some(op) => Call {
            operation: Some(op),
            ..Call::new(Coll::ExchangeSetup, comm)
        },
        None => Call::new(Coll::CommDup, comm),
    }
}

fn send_recv(
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

fn reduction(
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
#[cfg(mpi_large_count)]
fn large(call: Call) -> Call {
    Call {
        large: true,
        ..call
    }
}

/// A neighborhood collective's arguments.
fn neighbor<C: Into<i64>>(coll: Coll, comm: MPI_Comm, send: (C, Dt), recv: (C, Dt)) -> Call {
    Call {
        scount: send.0.into(),
        stype: send.1,
        rcount: recv.0.into(),
        rtype: recv.1,
        ..base(coll, comm)
    }
}

// ---- initialization, communicators, ops ----

/// Ends the process with one line when it runs another MPI than the one
/// the checker was built for: its first call with a handle would crash
/// it. Asked before `PMPI_Init` (`MPI_Get_library_version` needs none).
fn refuse_another_mpi() {
    if let Some(m) = mpix_marshal::mpi_mismatch() {
        let line = format!(
            "mpix-check: built for {} but this process runs {}: use the mpix-check installed for that MPI\n",
            m.built_for, m.running
        );
        // One write, so that the ranks' lines do not interleave.
        let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
        std::process::exit(1);
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
    refuse_another_mpi();
    // SAFETY: the user's arguments.
    let rc = unsafe { PMPI_Init(argc, argv) };
    if rc == 0 {
        mpi::world_rank();
        crate::hang::known(mpi::comm_world());
        if let Some(st) = mpi::state(mpi::comm_world()) {
            mpi::channel::open(st.dup);
        }
        crate::p2p::setup(mpi::comm_world(), None);
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Init_thread(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    refuse_another_mpi();
    // SAFETY: the user's arguments.
    let rc = unsafe { PMPI_Init_thread(argc, argv, required, provided) };
    if rc == 0 {
        mpi::world_rank();
        crate::hang::known(mpi::comm_world());
        // SAFETY: MPI wrote the level provided; reads mpi-sys's copy of
        // MPI_THREAD_MULTIPLE.
        crate::threads::provided(unsafe { *provided }, unsafe { RSMPI_THREAD_MULTIPLE });
        if let Some(st) = mpi::state(mpi::comm_world()) {
            mpi::channel::open(st.dup);
        }
        crate::p2p::setup(mpi::comm_world(), None);
    }
    rc
}

/// The free of a communicator with a point-to-point channel first waits,
/// visibly, for every member (`crate::hang::collective`): the channel's
/// release inside the free settles with all of them.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_free(comm: *mut MPI_Comm) -> c_int {
    if !comm.is_null() {
        // SAFETY: the user's communicator handle.
        let c = unsafe { *comm };
        if let Some(dup) = crate::p2p::channel_dup(c) {
            crate::hang::collective("MPI_Comm_free", c, dup);
        }
    }
    // SAFETY: the user's argument.
    unsafe { PMPI_Comm_free(comm) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Finalize() -> c_int {
    // First every rank's arrival, in a wait the hang watchdog sees (a
    // rank that never comes is reported there), then the lost messages
    // and pending sends (collective over the world).
    crate::hang::finalize();
    crate::p2p::lost::at_finalize();
    crate::p2p::finalize(mpi::comm_world());
    mpi::channel::close();
    mpi::drop_state(mpi::comm_world());
    mpi::drop_state(mpi::comm_self());
    mpi::free_digest_type_op();
    // What MPI_Finalize runs of the exchange (its settling, at the
    // deletion of MPI_COMM_SELF's attributes) is the checker's own.
    // SAFETY: as the user asked.
    crate::internal::within(|| unsafe { PMPI_Finalize() })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_name(comm: MPI_Comm, name: *const c_char) -> c_int {
    // SAFETY: the user's arguments.
    let rc = unsafe { PMPI_Comm_set_name(comm, name as *mut c_char) };
    if rc == 0 {
        mpi::renamed(comm);
    }
    rc
}

/// A new communicator gets its private duplicate now, while all its
/// members are in the call that made it.
fn made(rc: c_int, parent: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
    let library_owned = mpix_marshal::library_collective_point().is_some();
    if rc == 0 && !newcomm.is_null() && !crate::internal::active() && !library_owned {
        // SAFETY: MPI wrote the new communicator.
        mpi::state(unsafe { *newcomm });
        // SAFETY: as above.
        crate::p2p::setup(unsafe { *newcomm }, Some(parent));
        // SAFETY: as above.
        crate::hang::known(unsafe { *newcomm });
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_dup(comm: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
    let rc = checked!(comm_dup(comm), PMPI_Comm_dup(comm, newcomm));
    made(rc, comm, newcomm)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_dup_with_info(
    comm: MPI_Comm,
    info: MPI_Info,
    newcomm: *mut MPI_Comm,
) -> c_int {
    let rc = checked!(
        base(Coll::CommDup, comm),
        PMPI_Comm_dup_with_info(comm, info, newcomm)
    );
    made(rc, comm, newcomm)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_split(
    comm: MPI_Comm,
    color: c_int,
    key: c_int,
    newcomm: *mut MPI_Comm,
) -> c_int {
    let rc = checked!(
        base(Coll::CommSplit, comm),
        PMPI_Comm_split(comm, color, key, newcomm)
    );
    made(rc, comm, newcomm)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_split_type(
    comm: MPI_Comm,
    split_type: c_int,
    key: c_int,
    info: MPI_Info,
    newcomm: *mut MPI_Comm,
) -> c_int {
    let rc = checked!(
        base(Coll::CommSplit, comm),
        PMPI_Comm_split_type(comm, split_type, key, info, newcomm)
    );
    made(rc, comm, newcomm)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create(
    comm: MPI_Comm,
    group: MPI_Group,
    newcomm: *mut MPI_Comm,
) -> c_int {
    let rc = checked!(
        base(Coll::CommCreate, comm),
        PMPI_Comm_create(comm, group, newcomm)
    );
    made(rc, comm, newcomm)
}

// Constructors the collective checks need not see (the new
// communicator's checks start at its first collective), wrapped so that
// the point-to-point checks get their channel while every member is in
// the call.

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create_group(
    comm: MPI_Comm,
    group: MPI_Group,
    tag: c_int,
    newcomm: *mut MPI_Comm,
) -> c_int {
    // SAFETY: the user's arguments.
    made(
        unsafe { PMPI_Comm_create_group(comm, group, tag, newcomm) },
        comm,
        newcomm,
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_sub(
    comm: MPI_Comm,
    remain_dims: *const c_int,
    newcomm: *mut MPI_Comm,
) -> c_int {
    // SAFETY: the user's arguments.
    made(
        unsafe { PMPI_Cart_sub(comm, remain_dims as _, newcomm) },
        comm,
        newcomm,
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_create(
    comm_old: MPI_Comm,
    n: c_int,
    sources: *const c_int,
    degrees: *const c_int,
    destinations: *const c_int,
    weights: *const c_int,
    info: MPI_Info,
    reorder: c_int,
    comm_dist_graph: *mut MPI_Comm,
) -> c_int {
    // SAFETY: the user's arguments.
    let rc = unsafe {
        PMPI_Dist_graph_create(
            comm_old,
            n,
            sources as _,
            degrees as _,
            destinations as _,
            weights as _,
            info,
            reorder,
            comm_dist_graph,
        )
    };
    made(rc, comm_old, comm_dist_graph)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_create_adjacent(
    comm_old: MPI_Comm,
    indegree: c_int,
    sources: *const c_int,
    sourceweights: *const c_int,
    outdegree: c_int,
    destinations: *const c_int,
    destweights: *const c_int,
    info: MPI_Info,
    reorder: c_int,
    comm_dist_graph: *mut MPI_Comm,
) -> c_int {
    // SAFETY: the user's arguments.
    let rc = unsafe {
        PMPI_Dist_graph_create_adjacent(
            comm_old,
            indegree,
            sources as _,
            sourceweights as _,
            outdegree,
            destinations as _,
            destweights as _,
            info,
            reorder,
            comm_dist_graph,
        )
    };
    made(rc, comm_old, comm_dist_graph)
}

/// The hash of a Cartesian topology's dims and periods (which must agree).
fn cart_words(ndims: c_int, dims: *const c_int, periods: *const c_int) -> u64 {
    let n = ndims.max(0) as usize;
    let words = (0..n).flat_map(|i| {
        // SAFETY: dims and periods have ndims entries (MPI requires it).
        unsafe { [*dims.add(i) as u64, *periods.add(i) as u64] }
    });
    hash_words(std::iter::once(n as u64).chain(words))
}

/// The hash of a graph topology's index and edges (which must agree).
fn graph_words(nnodes: c_int, index: *const c_int, edges: *const c_int) -> u64 {
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

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_create(
    comm: MPI_Comm,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    reorder: c_int,
    newcomm: *mut MPI_Comm,
) -> c_int {
    let call = Call {
        extra: cart_words(ndims, dims, periods),
        ..base(Coll::CartCreate, comm)
    };
    let rc = checked!(
        call,
        PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm)
    );
    made(rc, comm, newcomm)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_map(
    comm: MPI_Comm,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    let call = Call {
        extra: cart_words(ndims, dims, periods),
        ..base(Coll::CartMap, comm)
    };
    checked!(call, PMPI_Cart_map(comm, ndims, dims, periods, newrank))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_map(
    comm: MPI_Comm,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    let call = Call {
        extra: graph_words(nnodes, index, edges),
        ..base(Coll::GraphMap, comm)
    };
    checked!(call, PMPI_Graph_map(comm, nnodes, index, edges, newrank))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_idup(
    comm: MPI_Comm,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // The new communicator gets its private duplicate at its first check.
    started!(
        base(Coll::CommDup, comm),
        Form::Nonblocking,
        request,
        PMPI_Comm_idup(comm, newcomm, request)
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_create(
    comm: MPI_Comm,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    reorder: c_int,
    newcomm: *mut MPI_Comm,
) -> c_int {
    let call = Call {
        extra: graph_words(nnodes, index, edges),
        ..base(Coll::GraphCreate, comm)
    };
    let rc = checked!(
        call,
        PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm)
    );
    made(rc, comm, newcomm)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Intercomm_create(
    local_comm: MPI_Comm,
    local_leader: c_int,
    peer_comm: MPI_Comm,
    remote_leader: c_int,
    tag: c_int,
    newintercomm: *mut MPI_Comm,
) -> c_int {
    let call = Call {
        root: local_leader,
        extra: tag as i64 as u64,
        ..base(Coll::IntercommCreate, local_comm)
    };
    let rc = checked!(
        call,
        PMPI_Intercomm_create(
            local_comm,
            local_leader,
            peer_comm,
            remote_leader,
            tag,
            newintercomm
        )
    );
    made(rc, local_comm, newintercomm)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Intercomm_merge(
    intercomm: MPI_Comm,
    high: c_int,
    newcomm: *mut MPI_Comm,
) -> c_int {
    // `high` must agree within each group (checked on the merged groups).
    let call = Call {
        extra: (high != 0) as u64,
        ..base(Coll::IntercommMerge, intercomm)
    };
    let rc = checked!(call, PMPI_Intercomm_merge(intercomm, high, newcomm));
    made(rc, intercomm, newcomm)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Op_create(
    f: MPI_User_function,
    commute: c_int,
    op: *mut MPI_Op,
) -> c_int {
    // SAFETY: the user's arguments.
    let rc = unsafe { PMPI_Op_create(f, commute, op) };
    if rc == 0 {
        let p = f.map_or(std::ptr::null(), |f| f as *const c_void);
        // SAFETY: MPI wrote the op; p is the user's function.
        unsafe { mpi::op_created(*op, p, commute) };
    }
    rc
}

/// A freed type's handle may name another type later: the checker's
/// caches of type signatures start over.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_free(datatype: *mut MPI_Datatype) -> c_int {
    check::TYPES_FREED.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    // SAFETY: the user's arguments.
    unsafe { PMPI_Type_free(datatype) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Op_free(op: *mut MPI_Op) -> c_int {
    // SAFETY: the user's op.
    mpi::op_freed(unsafe { *op });
    // SAFETY: the user's arguments.
    unsafe { PMPI_Op_free(op) }
}

// ---- collectives: each described once, its blocking, nonblocking and
// ---- (MPI 4) persistent forms generated from the description ----

/// One collective's wrappers. `$call` builds the check's description from
/// the arguments; the blocking form checks before calling, the
/// nonblocking form (`MPI_I…`, extra `request`) and the persistent form
/// (`MPI_…_init`, extra `info` and `request`; only where the MPI has it)
/// start the check and complete it with the request.
macro_rules! collective {
    (
        $(#[$attr:meta])*
        $name:ident / $pname:ident,
        $iname:ident / $piname:ident,
        $init:ident / $pinit:ident,
        ($($arg:ident : $ty:ty),* $(,)?) => $call:expr
    ) => {
        $(#[$attr])*
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            checked!($call, $pname($($arg),*))
        }

        $(#[$attr])*
        #[no_mangle]
        pub unsafe extern "C" fn $iname($($arg: $ty,)* request: *mut MPI_Request) -> c_int {
            started!($call, Form::Nonblocking, request, $piname($($arg,)* request))
        }

        $(#[$attr])*
        #[cfg(mpi_persistent_collectives)]
        #[no_mangle]
        pub unsafe extern "C" fn $init(
            $($arg: $ty,)*
            info: MPI_Info,
            request: *mut MPI_Request,
        ) -> c_int {
            started!($call, Form::Persistent, request, $pinit($($arg,)* info, request))
        }
    };
}

collective!(
    MPI_Barrier / PMPI_Barrier,
    MPI_Ibarrier / PMPI_Ibarrier,
    MPI_Barrier_init / PMPI_Barrier_init,
    (comm: MPI_Comm) => base(Coll::Barrier, comm)
);

collective!(
    MPI_Bcast / PMPI_Bcast,
    MPI_Ibcast / PMPI_Ibcast,
    MPI_Bcast_init / PMPI_Bcast_init,
    (buf: *mut c_void, count: c_int, t: Dt, root: c_int, comm: MPI_Comm) => Call {
        root,
        scount: count.into(),
        stype: t,
        ..base(Coll::Bcast, comm)
    }
);

collective!(
    MPI_Gather / PMPI_Gather,
    MPI_Igather / PMPI_Igather,
    MPI_Gather_init / PMPI_Gather_init,
    (
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dt,
        recvbuf: *mut c_void, recvcount: c_int, recvtype: Dt,
        root: c_int, comm: MPI_Comm,
    ) => Call {
        root,
        ..send_recv(Coll::Gather, comm, sendbuf, sendcount, sendtype, recvcount, recvtype)
    }
);

collective!(
    MPI_Gatherv / PMPI_Gatherv,
    MPI_Igatherv / PMPI_Igatherv,
    MPI_Gatherv_init / PMPI_Gatherv_init,
    (
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dt,
        recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Dt,
        root: c_int, comm: MPI_Comm,
    ) => Call {
        root,
        rcounts: recvcounts.into(),
        ..send_recv(Coll::Gatherv, comm, sendbuf, sendcount, sendtype, 0, recvtype)
    }
);

collective!(
    MPI_Scatter / PMPI_Scatter,
    MPI_Iscatter / PMPI_Iscatter,
    MPI_Scatter_init / PMPI_Scatter_init,
    (
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dt,
        recvbuf: *mut c_void, recvcount: c_int, recvtype: Dt,
        root: c_int, comm: MPI_Comm,
    ) => Call {
        root,
        in_place: mpi::is_in_place(recvbuf),
        ..send_recv(Coll::Scatter, comm, sendbuf, sendcount, sendtype, recvcount, recvtype)
    }
);

collective!(
    MPI_Scatterv / PMPI_Scatterv,
    MPI_Iscatterv / PMPI_Iscatterv,
    MPI_Scatterv_init / PMPI_Scatterv_init,
    (
        sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: Dt,
        recvbuf: *mut c_void, recvcount: c_int, recvtype: Dt,
        root: c_int, comm: MPI_Comm,
    ) => Call {
        root,
        in_place: mpi::is_in_place(recvbuf),
        scounts: sendcounts.into(),
        ..send_recv(Coll::Scatterv, comm, sendbuf, 0, sendtype, recvcount, recvtype)
    }
);

collective!(
    MPI_Allgather / PMPI_Allgather,
    MPI_Iallgather / PMPI_Iallgather,
    MPI_Allgather_init / PMPI_Allgather_init,
    (
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dt,
        recvbuf: *mut c_void, recvcount: c_int, recvtype: Dt, comm: MPI_Comm,
    ) => send_recv(Coll::Allgather, comm, sendbuf, sendcount, sendtype, recvcount, recvtype)
);

collective!(
    MPI_Allgatherv / PMPI_Allgatherv,
    MPI_Iallgatherv / PMPI_Iallgatherv,
    MPI_Allgatherv_init / PMPI_Allgatherv_init,
    (
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dt,
        recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Dt,
        comm: MPI_Comm,
    ) => Call {
        rcounts: recvcounts.into(),
        ..send_recv(Coll::Allgatherv, comm, sendbuf, sendcount, sendtype, 0, recvtype)
    }
);

collective!(
    MPI_Alltoall / PMPI_Alltoall,
    MPI_Ialltoall / PMPI_Ialltoall,
    MPI_Alltoall_init / PMPI_Alltoall_init,
    (
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dt,
        recvbuf: *mut c_void, recvcount: c_int, recvtype: Dt, comm: MPI_Comm,
    ) => send_recv(Coll::Alltoall, comm, sendbuf, sendcount, sendtype, recvcount, recvtype)
);

collective!(
    MPI_Alltoallv / PMPI_Alltoallv,
    MPI_Ialltoallv / PMPI_Ialltoallv,
    MPI_Alltoallv_init / PMPI_Alltoallv_init,
    (
        sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: Dt,
        recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: Dt,
        comm: MPI_Comm,
    ) => Call {
        scounts: sendcounts.into(),
        rcounts: recvcounts.into(),
        ..send_recv(Coll::Alltoallv, comm, sendbuf, 0, sendtype, 0, recvtype)
    }
);

collective!(
    MPI_Alltoallw / PMPI_Alltoallw,
    MPI_Ialltoallw / PMPI_Ialltoallw,
    MPI_Alltoallw_init / PMPI_Alltoallw_init,
    (
        sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int,
        sendtypes: *const Dt,
        recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int,
        recvtypes: *const Dt,
        comm: MPI_Comm,
    ) => Call {
        in_place: mpi::is_in_place(sendbuf),
        scounts: sendcounts.into(),
        rcounts: recvcounts.into(),
        stypes: sendtypes,
        rtypes: recvtypes,
        ..base(Coll::Alltoallw, comm)
    }
);

collective!(
    MPI_Reduce / PMPI_Reduce,
    MPI_Ireduce / PMPI_Ireduce,
    MPI_Reduce_init / PMPI_Reduce_init,
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, t: Dt, op: MPI_Op,
        root: c_int, comm: MPI_Comm,
    ) => Call {
        root,
        ..reduction(Coll::Reduce, comm, sendbuf, count, t, op)
    }
);

collective!(
    MPI_Allreduce / PMPI_Allreduce,
    MPI_Iallreduce / PMPI_Iallreduce,
    MPI_Allreduce_init / PMPI_Allreduce_init,
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, t: Dt, op: MPI_Op,
        comm: MPI_Comm,
    ) => reduction(Coll::Allreduce, comm, sendbuf, count, t, op)
);

collective!(
    MPI_Reduce_scatter / PMPI_Reduce_scatter,
    MPI_Ireduce_scatter / PMPI_Ireduce_scatter,
    MPI_Reduce_scatter_init / PMPI_Reduce_scatter_init,
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, t: Dt,
        op: MPI_Op, comm: MPI_Comm,
    ) => Call {
        rcounts: recvcounts.into(),
        ..reduction(Coll::ReduceScatter, comm, sendbuf, 1, t, op)
    }
);

collective!(
    MPI_Reduce_scatter_block / PMPI_Reduce_scatter_block,
    MPI_Ireduce_scatter_block / PMPI_Ireduce_scatter_block,
    MPI_Reduce_scatter_block_init / PMPI_Reduce_scatter_block_init,
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, t: Dt, op: MPI_Op,
        comm: MPI_Comm,
    ) => reduction(Coll::ReduceScatterBlock, comm, sendbuf, recvcount, t, op)
);

collective!(
    MPI_Scan / PMPI_Scan,
    MPI_Iscan / PMPI_Iscan,
    MPI_Scan_init / PMPI_Scan_init,
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, t: Dt, op: MPI_Op,
        comm: MPI_Comm,
    ) => reduction(Coll::Scan, comm, sendbuf, count, t, op)
);

collective!(
    MPI_Exscan / PMPI_Exscan,
    MPI_Iexscan / PMPI_Iexscan,
    MPI_Exscan_init / PMPI_Exscan_init,
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, t: Dt, op: MPI_Op,
        comm: MPI_Comm,
    ) => reduction(Coll::Exscan, comm, sendbuf, count, t, op)
);

// Neighborhood collectives: the pairs are the topology's edges (no
// MPI_IN_PLACE: the standard does not allow it here).

collective!(
    MPI_Neighbor_allgather / PMPI_Neighbor_allgather,
    MPI_Ineighbor_allgather / PMPI_Ineighbor_allgather,
    MPI_Neighbor_allgather_init / PMPI_Neighbor_allgather_init,
    (
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dt,
        recvbuf: *mut c_void, recvcount: c_int, recvtype: Dt, comm: MPI_Comm,
    ) => neighbor(Coll::NeighborAllgather, comm, (sendcount, sendtype), (recvcount, recvtype))
);

collective!(
    MPI_Neighbor_allgatherv / PMPI_Neighbor_allgatherv,
    MPI_Ineighbor_allgatherv / PMPI_Ineighbor_allgatherv,
    MPI_Neighbor_allgatherv_init / PMPI_Neighbor_allgatherv_init,
    (
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dt,
        recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Dt,
        comm: MPI_Comm,
    ) => Call {
        rcounts: recvcounts.into(),
        ..neighbor(Coll::NeighborAllgatherv, comm, (sendcount, sendtype), (0, recvtype))
    }
);

collective!(
    MPI_Neighbor_alltoall / PMPI_Neighbor_alltoall,
    MPI_Ineighbor_alltoall / PMPI_Ineighbor_alltoall,
    MPI_Neighbor_alltoall_init / PMPI_Neighbor_alltoall_init,
    (
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dt,
        recvbuf: *mut c_void, recvcount: c_int, recvtype: Dt, comm: MPI_Comm,
    ) => neighbor(Coll::NeighborAlltoall, comm, (sendcount, sendtype), (recvcount, recvtype))
);

collective!(
    MPI_Neighbor_alltoallv / PMPI_Neighbor_alltoallv,
    MPI_Ineighbor_alltoallv / PMPI_Ineighbor_alltoallv,
    MPI_Neighbor_alltoallv_init / PMPI_Neighbor_alltoallv_init,
    (
        sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: Dt,
        recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: Dt,
        comm: MPI_Comm,
    ) => Call {
        scounts: sendcounts.into(),
        rcounts: recvcounts.into(),
        ..neighbor(Coll::NeighborAlltoallv, comm, (0, sendtype), (0, recvtype))
    }
);

collective!(
    MPI_Neighbor_alltoallw / PMPI_Neighbor_alltoallw,
    MPI_Ineighbor_alltoallw / PMPI_Ineighbor_alltoallw,
    MPI_Neighbor_alltoallw_init / PMPI_Neighbor_alltoallw_init,
    (
        sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const MPI_Aint,
        sendtypes: *const Dt,
        recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const MPI_Aint,
        recvtypes: *const Dt,
        comm: MPI_Comm,
    ) => Call {
        scounts: sendcounts.into(),
        rcounts: recvcounts.into(),
        stypes: sendtypes,
        rtypes: recvtypes,
        ..base(Coll::NeighborAlltoallw, comm)
    }
);

// The MPI-4 large-count forms (`MPI_Bcast_c`, …: counts as `MPI_Count`,
// displacements as `MPI_Aint`), where mpi.h declares them (MPICH 4; not
// Open MPI 4.1), with the same checks.

collective!(
    #[cfg(mpi_large_count)]
    MPI_Bcast_c / PMPI_Bcast_c,
    MPI_Ibcast_c / PMPI_Ibcast_c,
    MPI_Bcast_init_c / PMPI_Bcast_init_c,
    (buf: *mut c_void, count: MPI_Count, t: Dt, root: c_int, comm: MPI_Comm) => large(Call {
        root,
        scount: count.into(),
        stype: t,
        ..base(Coll::Bcast, comm)
    }
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Gather_c / PMPI_Gather_c,
    MPI_Igather_c / PMPI_Igather_c,
    MPI_Gather_init_c / PMPI_Gather_init_c,
    (
        sendbuf: *const c_void, sendcount: MPI_Count, sendtype: Dt,
        recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: Dt,
        root: c_int, comm: MPI_Comm,
    ) => large(Call {
        root,
        ..send_recv(Coll::Gather, comm, sendbuf, sendcount, sendtype, recvcount, recvtype)
    }
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Gatherv_c / PMPI_Gatherv_c,
    MPI_Igatherv_c / PMPI_Igatherv_c,
    MPI_Gatherv_init_c / PMPI_Gatherv_init_c,
    (
        sendbuf: *const c_void, sendcount: MPI_Count, sendtype: Dt,
        recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: Dt,
        root: c_int, comm: MPI_Comm,
    ) => large(Call {
        root,
        rcounts: recvcounts.into(),
        ..send_recv(Coll::Gatherv, comm, sendbuf, sendcount, sendtype, 0, recvtype)
    }
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Scatter_c / PMPI_Scatter_c,
    MPI_Iscatter_c / PMPI_Iscatter_c,
    MPI_Scatter_init_c / PMPI_Scatter_init_c,
    (
        sendbuf: *const c_void, sendcount: MPI_Count, sendtype: Dt,
        recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: Dt,
        root: c_int, comm: MPI_Comm,
    ) => large(Call {
        root,
        in_place: mpi::is_in_place(recvbuf),
        ..send_recv(Coll::Scatter, comm, sendbuf, sendcount, sendtype, recvcount, recvtype)
    }
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Scatterv_c / PMPI_Scatterv_c,
    MPI_Iscatterv_c / PMPI_Iscatterv_c,
    MPI_Scatterv_init_c / PMPI_Scatterv_init_c,
    (
        sendbuf: *const c_void, sendcounts: *const MPI_Count, displs: *const MPI_Aint, sendtype: Dt,
        recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: Dt,
        root: c_int, comm: MPI_Comm,
    ) => large(Call {
        root,
        in_place: mpi::is_in_place(recvbuf),
        scounts: sendcounts.into(),
        ..send_recv(Coll::Scatterv, comm, sendbuf, 0, sendtype, recvcount, recvtype)
    }
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Allgather_c / PMPI_Allgather_c,
    MPI_Iallgather_c / PMPI_Iallgather_c,
    MPI_Allgather_init_c / PMPI_Allgather_init_c,
    (
        sendbuf: *const c_void, sendcount: MPI_Count, sendtype: Dt,
        recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: Dt, comm: MPI_Comm,
    ) => large(send_recv(Coll::Allgather, comm, sendbuf, sendcount, sendtype, recvcount, recvtype)
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Allgatherv_c / PMPI_Allgatherv_c,
    MPI_Iallgatherv_c / PMPI_Iallgatherv_c,
    MPI_Allgatherv_init_c / PMPI_Allgatherv_init_c,
    (
        sendbuf: *const c_void, sendcount: MPI_Count, sendtype: Dt,
        recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: Dt,
        comm: MPI_Comm,
    ) => large(Call {
        rcounts: recvcounts.into(),
        ..send_recv(Coll::Allgatherv, comm, sendbuf, sendcount, sendtype, 0, recvtype)
    }
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Alltoall_c / PMPI_Alltoall_c,
    MPI_Ialltoall_c / PMPI_Ialltoall_c,
    MPI_Alltoall_init_c / PMPI_Alltoall_init_c,
    (
        sendbuf: *const c_void, sendcount: MPI_Count, sendtype: Dt,
        recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: Dt, comm: MPI_Comm,
    ) => large(send_recv(Coll::Alltoall, comm, sendbuf, sendcount, sendtype, recvcount, recvtype)
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Alltoallv_c / PMPI_Alltoallv_c,
    MPI_Ialltoallv_c / PMPI_Ialltoallv_c,
    MPI_Alltoallv_init_c / PMPI_Alltoallv_init_c,
    (
        sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: Dt,
        recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: Dt,
        comm: MPI_Comm,
    ) => large(Call {
        scounts: sendcounts.into(),
        rcounts: recvcounts.into(),
        ..send_recv(Coll::Alltoallv, comm, sendbuf, 0, sendtype, 0, recvtype)
    }
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Alltoallw_c / PMPI_Alltoallw_c,
    MPI_Ialltoallw_c / PMPI_Ialltoallw_c,
    MPI_Alltoallw_init_c / PMPI_Alltoallw_init_c,
    (
        sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint,
        sendtypes: *const Dt,
        recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint,
        recvtypes: *const Dt,
        comm: MPI_Comm,
    ) => large(Call {
        in_place: mpi::is_in_place(sendbuf),
        scounts: sendcounts.into(),
        rcounts: recvcounts.into(),
        stypes: sendtypes,
        rtypes: recvtypes,
        ..base(Coll::Alltoallw, comm)
    }
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Reduce_c / PMPI_Reduce_c,
    MPI_Ireduce_c / PMPI_Ireduce_c,
    MPI_Reduce_init_c / PMPI_Reduce_init_c,
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, t: Dt, op: MPI_Op,
        root: c_int, comm: MPI_Comm,
    ) => large(Call {
        root,
        ..reduction(Coll::Reduce, comm, sendbuf, count, t, op)
    }
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Allreduce_c / PMPI_Allreduce_c,
    MPI_Iallreduce_c / PMPI_Iallreduce_c,
    MPI_Allreduce_init_c / PMPI_Allreduce_init_c,
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, t: Dt, op: MPI_Op,
        comm: MPI_Comm,
    ) => large(reduction(Coll::Allreduce, comm, sendbuf, count, t, op)
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Reduce_scatter_c / PMPI_Reduce_scatter_c,
    MPI_Ireduce_scatter_c / PMPI_Ireduce_scatter_c,
    MPI_Reduce_scatter_init_c / PMPI_Reduce_scatter_init_c,
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const MPI_Count, t: Dt,
        op: MPI_Op, comm: MPI_Comm,
    ) => large(Call {
        rcounts: recvcounts.into(),
        ..reduction(Coll::ReduceScatter, comm, sendbuf, 1, t, op)
    }
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Reduce_scatter_block_c / PMPI_Reduce_scatter_block_c,
    MPI_Ireduce_scatter_block_c / PMPI_Ireduce_scatter_block_c,
    MPI_Reduce_scatter_block_init_c / PMPI_Reduce_scatter_block_init_c,
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count, t: Dt, op: MPI_Op,
        comm: MPI_Comm,
    ) => large(reduction(Coll::ReduceScatterBlock, comm, sendbuf, recvcount, t, op)
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Scan_c / PMPI_Scan_c,
    MPI_Iscan_c / PMPI_Iscan_c,
    MPI_Scan_init_c / PMPI_Scan_init_c,
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, t: Dt, op: MPI_Op,
        comm: MPI_Comm,
    ) => large(reduction(Coll::Scan, comm, sendbuf, count, t, op)
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Exscan_c / PMPI_Exscan_c,
    MPI_Iexscan_c / PMPI_Iexscan_c,
    MPI_Exscan_init_c / PMPI_Exscan_init_c,
    (
        sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, t: Dt, op: MPI_Op,
        comm: MPI_Comm,
    ) => large(reduction(Coll::Exscan, comm, sendbuf, count, t, op)
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Neighbor_allgather_c / PMPI_Neighbor_allgather_c,
    MPI_Ineighbor_allgather_c / PMPI_Ineighbor_allgather_c,
    MPI_Neighbor_allgather_init_c / PMPI_Neighbor_allgather_init_c,
    (
        sendbuf: *const c_void, sendcount: MPI_Count, sendtype: Dt,
        recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: Dt, comm: MPI_Comm,
    ) => large(neighbor(Coll::NeighborAllgather, comm, (sendcount, sendtype), (recvcount, recvtype))
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Neighbor_allgatherv_c / PMPI_Neighbor_allgatherv_c,
    MPI_Ineighbor_allgatherv_c / PMPI_Ineighbor_allgatherv_c,
    MPI_Neighbor_allgatherv_init_c / PMPI_Neighbor_allgatherv_init_c,
    (
        sendbuf: *const c_void, sendcount: MPI_Count, sendtype: Dt,
        recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: Dt,
        comm: MPI_Comm,
    ) => large(Call {
        rcounts: recvcounts.into(),
        ..neighbor(Coll::NeighborAllgatherv, comm, (sendcount, sendtype), (0, recvtype))
    }
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Neighbor_alltoall_c / PMPI_Neighbor_alltoall_c,
    MPI_Ineighbor_alltoall_c / PMPI_Ineighbor_alltoall_c,
    MPI_Neighbor_alltoall_init_c / PMPI_Neighbor_alltoall_init_c,
    (
        sendbuf: *const c_void, sendcount: MPI_Count, sendtype: Dt,
        recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: Dt, comm: MPI_Comm,
    ) => large(neighbor(Coll::NeighborAlltoall, comm, (sendcount, sendtype), (recvcount, recvtype))
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Neighbor_alltoallv_c / PMPI_Neighbor_alltoallv_c,
    MPI_Ineighbor_alltoallv_c / PMPI_Ineighbor_alltoallv_c,
    MPI_Neighbor_alltoallv_init_c / PMPI_Neighbor_alltoallv_init_c,
    (
        sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: Dt,
        recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: Dt,
        comm: MPI_Comm,
    ) => large(Call {
        scounts: sendcounts.into(),
        rcounts: recvcounts.into(),
        ..neighbor(Coll::NeighborAlltoallv, comm, (0, sendtype), (0, recvtype))
    }
    )
);

collective!(
    #[cfg(mpi_large_count)]
    MPI_Neighbor_alltoallw_c / PMPI_Neighbor_alltoallw_c,
    MPI_Ineighbor_alltoallw_c / PMPI_Ineighbor_alltoallw_c,
    MPI_Neighbor_alltoallw_init_c / PMPI_Neighbor_alltoallw_init_c,
    (
        sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint,
        sendtypes: *const Dt,
        recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint,
        recvtypes: *const Dt,
        comm: MPI_Comm,
    ) => large(Call {
        scounts: sendcounts.into(),
        rcounts: recvcounts.into(),
        stypes: sendtypes,
        rtypes: recvtypes,
        ..base(Coll::NeighborAlltoallw, comm)
    }
    )
);

// ---- windows and files (the collective calls of the paper's Table 2) ----

/// A C string argument's bytes (empty for a null pointer).
fn c_bytes(p: *const c_char) -> Vec<u8> {
    if p.is_null() {
        return Vec::new();
    }
    // SAFETY: MPI requires its string arguments to be NUL-terminated.
    unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes().to_vec()
}

/// A window or file call: checked on the object's own private duplicate.
fn on_object(coll: Coll, object: mpi::Object) -> Call {
    Call {
        object: Some(object),
        ..base(coll, mpi::comm_null())
    }
}

/// A window made collectively on `comm` gets its checker state.
fn window_made(rc: c_int, win: *mut MPI_Win, comm: MPI_Comm) -> c_int {
    if rc == 0 && !win.is_null() {
        // SAFETY: MPI wrote the window.
        let w = unsafe { *win };
        mpi::object_made(w, comm, mpi::win_label(w, comm));
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_create(
    base_: *mut c_void,
    size: MPI_Aint,
    disp_unit: c_int,
    info: MPI_Info,
    comm: MPI_Comm,
    win: *mut MPI_Win,
) -> c_int {
    let rc = checked!(
        base(Coll::WinCreate, comm),
        PMPI_Win_create(base_, size, disp_unit, info, comm, win)
    );
    window_made(rc, win, comm)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_allocate(
    size: MPI_Aint,
    disp_unit: c_int,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
) -> c_int {
    let rc = checked!(
        base(Coll::WinAllocate, comm),
        PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win)
    );
    window_made(rc, win, comm)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_allocate_shared(
    size: MPI_Aint,
    disp_unit: c_int,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
) -> c_int {
    let rc = checked!(
        base(Coll::WinAllocateShared, comm),
        PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win)
    );
    window_made(rc, win, comm)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_create_dynamic(
    info: MPI_Info,
    comm: MPI_Comm,
    win: *mut MPI_Win,
) -> c_int {
    let rc = checked!(
        base(Coll::WinCreateDynamic, comm),
        PMPI_Win_create_dynamic(info, comm, win)
    );
    window_made(rc, win, comm)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_fence(assert: c_int, win: MPI_Win) -> c_int {
    let call = Call {
        extra: assert as u64,
        ..on_object(Coll::WinFence, mpi::Object::Win(win))
    };
    checked!(call, PMPI_Win_fence(assert, win))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_free(win: *mut MPI_Win) -> c_int {
    // SAFETY: the user's window.
    let w = unsafe { *win };
    let rc = checked!(
        on_object(Coll::WinFree, mpi::Object::Win(w)),
        PMPI_Win_free(win)
    );
    if rc == 0 {
        mpi::object_freed(mpi::bits(w));
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_open(
    comm: MPI_Comm,
    filename: *const c_char,
    amode: c_int,
    info: MPI_Info,
    fh: *mut MPI_File,
) -> c_int {
    let name = c_bytes(filename);
    let call = Call {
        extra: hash_words(
            [amode as u64, name.len() as u64]
                .into_iter()
                .chain(name.iter().map(|&b| b as u64)),
        ),
        ..base(Coll::FileOpen, comm)
    };
    let rc = checked!(call, PMPI_File_open(comm, filename, amode, info, fh));
    if rc == 0 && !fh.is_null() {
        let mut size = 0;
        // SAFETY: a query of the user's communicator.
        unsafe { PMPI_Comm_size(comm, &mut size) };
        let label = format!(
            "the file \"{}\" opened on {}",
            String::from_utf8_lossy(&name),
            mpi::comm_name(comm, size.max(0) as usize)
        );
        // SAFETY: MPI wrote the file handle.
        mpi::object_made(unsafe { *fh }, comm, label);
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_close(fh: *mut MPI_File) -> c_int {
    // SAFETY: the user's file handle.
    let f = unsafe { *fh };
    let rc = checked!(
        on_object(Coll::FileClose, mpi::Object::File(f)),
        PMPI_File_close(fh)
    );
    if rc == 0 {
        mpi::object_freed(mpi::bits(f));
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_set_size(fh: MPI_File, size: MPI_Offset) -> c_int {
    let call = Call {
        extra: size as u64,
        ..on_object(Coll::FileSetSize, mpi::Object::File(fh))
    };
    checked!(call, PMPI_File_set_size(fh, size))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_preallocate(fh: MPI_File, size: MPI_Offset) -> c_int {
    let call = Call {
        extra: size as u64,
        ..on_object(Coll::FilePreallocate, mpi::Object::File(fh))
    };
    checked!(call, PMPI_File_preallocate(fh, size))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_set_atomicity(fh: MPI_File, flag: c_int) -> c_int {
    let call = Call {
        extra: (flag != 0) as u64,
        ..on_object(Coll::FileSetAtomicity, mpi::Object::File(fh))
    };
    checked!(call, PMPI_File_set_atomicity(fh, flag))
}

/// The view: the data representation must agree, and so must the etypes'
/// signatures (each rank's etype describes the same file elements).
#[no_mangle]
pub unsafe extern "C" fn MPI_File_set_view(
    fh: MPI_File,
    disp: MPI_Offset,
    etype: Dt,
    filetype: Dt,
    datarep: *const c_char,
    info: MPI_Info,
) -> c_int {
    let rep = c_bytes(datarep);
    let call = Call {
        extra: hash_words(rep.iter().map(|&b| b as u64)),
        scount: 1,
        stype: etype,
        ..on_object(Coll::FileSetView, mpi::Object::File(fh))
    };
    checked!(
        call,
        PMPI_File_set_view(fh, disp, etype, filetype, datarep, info)
    )
}

/// The split collective file calls: each begin and end is a collective call
/// on the file's group, in the same order on every rank.
macro_rules! split_collective {
    ($($name:ident / $pname:ident: $coll:ident ($($arg:ident : $ty:ty),*);)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(fh: MPI_File, $($arg: $ty),*) -> c_int {
            checked!(on_object(Coll::$coll, mpi::Object::File(fh)), $pname(fh, $($arg),*))
        }
    )*};
}

split_collective! {
    MPI_File_read_all_begin / PMPI_File_read_all_begin:
        FileReadAllBegin (buf: *mut c_void, count: c_int, t: Dt);
    MPI_File_read_all_end / PMPI_File_read_all_end:
        FileReadAllEnd (buf: *mut c_void, status: *mut MPI_Status);
    MPI_File_write_all_begin / PMPI_File_write_all_begin:
        FileWriteAllBegin (buf: *const c_void, count: c_int, t: Dt);
    MPI_File_write_all_end / PMPI_File_write_all_end:
        FileWriteAllEnd (buf: *const c_void, status: *mut MPI_Status);
    MPI_File_read_at_all_begin / PMPI_File_read_at_all_begin:
        FileReadAtAllBegin (offset: MPI_Offset, buf: *mut c_void, count: c_int, t: Dt);
    MPI_File_read_at_all_end / PMPI_File_read_at_all_end:
        FileReadAtAllEnd (buf: *mut c_void, status: *mut MPI_Status);
    MPI_File_write_at_all_begin / PMPI_File_write_at_all_begin:
        FileWriteAtAllBegin (offset: MPI_Offset, buf: *const c_void, count: c_int, t: Dt);
    MPI_File_write_at_all_end / PMPI_File_write_at_all_end:
        FileWriteAtAllEnd (buf: *const c_void, status: *mut MPI_Status);
    MPI_File_read_ordered_begin / PMPI_File_read_ordered_begin:
        FileReadOrderedBegin (buf: *mut c_void, count: c_int, t: Dt);
    MPI_File_read_ordered_end / PMPI_File_read_ordered_end:
        FileReadOrderedEnd (buf: *mut c_void, status: *mut MPI_Status);
    MPI_File_write_ordered_begin / PMPI_File_write_ordered_begin:
        FileWriteOrderedBegin (buf: *const c_void, count: c_int, t: Dt);
    MPI_File_write_ordered_end / PMPI_File_write_ordered_end:
        FileWriteOrderedEnd (buf: *const c_void, status: *mut MPI_Status);
}

// ---- completion: a nonblocking collective's check completes with it ----

/// A persistent collective's request freed before any completion still
/// has its check in flight: the check completes first (every rank posted
/// its part when it made the request, so this does not wait for a start).
#[no_mangle]
pub unsafe extern "C" fn MPI_Request_free(request: *mut MPI_Request) -> c_int {
    // SAFETY: the user's request.
    crate::p2p::request_freed(unsafe { *request });
    // SAFETY: the user's request.
    crate::hang::freed(unsafe { *request });
    if check::any_pending() {
        // SAFETY: the user's request.
        if let Err(rc) = check::complete(unsafe { *request }, true) {
            return rc;
        }
    }
    // SAFETY: the user's arguments.
    unsafe { PMPI_Request_free(request) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    if check::any_pending() {
        // SAFETY: the user's request.
        if let Err(rc) = check::complete(unsafe { *request }, true) {
            return rc;
        }
    }
    // SAFETY: the user's arguments.
    unsafe { crate::p2p::wait(request, status) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Test(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    if check::any_pending() {
        // SAFETY: the user's request.
        match check::complete(unsafe { *request }, false) {
            Err(rc) => return rc,
            Ok(false) => {
                // SAFETY: the user's flag.
                unsafe { *flag = 0 };
                return 0;
            }
            Ok(true) => {}
        }
    }
    // SAFETY: the user's arguments.
    unsafe { crate::p2p::test(request, flag, status) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Waitall(
    count: c_int,
    requests: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> c_int {
    if check::any_pending() {
        for i in 0..count.max(0) as usize {
            // SAFETY: the user's array has count requests.
            if let Err(rc) = check::complete(unsafe { *requests.add(i) }, true) {
                return rc;
            }
        }
    }
    // SAFETY: the user's arguments.
    unsafe { crate::p2p::waitall(count, requests, statuses) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Testall(
    count: c_int,
    requests: *mut MPI_Request,
    flag: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    if check::any_pending() {
        let mut all = true;
        for i in 0..count.max(0) as usize {
            // SAFETY: the user's array has count requests.
            match check::complete(unsafe { *requests.add(i) }, false) {
                Err(rc) => return rc,
                Ok(done) => all &= done,
            }
        }
        if !all {
            // SAFETY: the user's flag.
            unsafe { *flag = 0 };
            return 0;
        }
    }
    // SAFETY: the user's arguments.
    unsafe { crate::p2p::testall(count, requests, flag, statuses) }
}

/// Drives the checks of `requests` without blocking; returns which still
/// have a check in flight.
fn drive(count: c_int, requests: *mut MPI_Request) -> Result<Vec<bool>, c_int> {
    (0..count.max(0) as usize)
        .map(|i| {
            // SAFETY: the user's array has count requests.
            check::complete(unsafe { *requests.add(i) }, false).map(|done| !done)
        })
        .collect()
}

/// The user's requests with those whose check is in flight replaced by
/// MPI_REQUEST_NULL (they cannot complete before their check).
fn masked(requests: *mut MPI_Request, busy: &[bool]) -> Vec<MPI_Request> {
    busy.iter()
        .enumerate()
        .map(|(i, &b)| {
            if b {
                mpi::request_null()
            } else {
                // SAFETY: the user's array has busy.len() requests.
                unsafe { *requests.add(i) }
            }
        })
        .collect()
}

fn unmask(requests: *mut MPI_Request, copy: &[MPI_Request], busy: &[bool]) {
    for (i, &b) in busy.iter().enumerate() {
        if !b {
            // SAFETY: as in `masked`.
            unsafe { *requests.add(i) = copy[i] };
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Waitany(
    count: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    loop {
        if !check::any_pending() {
            // SAFETY: the user's arguments.
            return unsafe { crate::p2p::any(count, requests, index, None, status) };
        }
        let busy = match drive(count, requests) {
            Ok(b) => b,
            Err(rc) => return rc,
        };
        if !busy.iter().any(|&b| b) {
            // SAFETY: the user's arguments.
            return unsafe { crate::p2p::any(count, requests, index, None, status) };
        }
        let mut copy = masked(requests, &busy);
        let mut flag = 0;
        // SAFETY: the copy has count requests; the user's index and status.
        let rc =
            unsafe { crate::p2p::any(count, copy.as_mut_ptr(), index, Some(&mut flag), status) };
        unmask(requests, &copy, &busy);
        // SAFETY: MPI wrote the index.
        if rc != 0 || (flag != 0 && unsafe { *index } != mpi::undefined()) {
            return rc;
        }
        std::thread::yield_now();
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Testany(
    count: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    if check::any_pending() {
        let busy = match drive(count, requests) {
            Ok(b) => b,
            Err(rc) => return rc,
        };
        if busy.iter().any(|&b| b) {
            let mut copy = masked(requests, &busy);
            // SAFETY: the copy has count requests; the user's outputs.
            let rc =
                unsafe { crate::p2p::any(count, copy.as_mut_ptr(), index, Some(flag), status) };
            unmask(requests, &copy, &busy);
            // SAFETY: MPI wrote index and flag.
            unsafe {
                if rc == 0 && *flag != 0 && *index == mpi::undefined() {
                    *flag = 0; // a request with a check in flight is still active
                }
            }
            return rc;
        }
    }
    // SAFETY: the user's arguments.
    unsafe { crate::p2p::any(count, requests, index, Some(flag), status) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Waitsome(
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    loop {
        if !check::any_pending() {
            // SAFETY: the user's arguments.
            return unsafe {
                crate::p2p::some(incount, requests, outcount, indices, statuses, false)
            };
        }
        let busy = match drive(incount, requests) {
            Ok(b) => b,
            Err(rc) => return rc,
        };
        if !busy.iter().any(|&b| b) {
            // SAFETY: the user's arguments.
            return unsafe {
                crate::p2p::some(incount, requests, outcount, indices, statuses, false)
            };
        }
        let mut copy = masked(requests, &busy);
        // SAFETY: the copy has incount requests; the user's outputs.
        let rc = unsafe {
            crate::p2p::some(
                incount,
                copy.as_mut_ptr(),
                outcount,
                indices,
                statuses,
                true,
            )
        };
        unmask(requests, &copy, &busy);
        // SAFETY: MPI wrote outcount.
        let n = unsafe { *outcount };
        if rc != 0 || (n > 0 && n != mpi::undefined()) {
            return rc;
        }
        std::thread::yield_now();
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Testsome(
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    if check::any_pending() {
        let busy = match drive(incount, requests) {
            Ok(b) => b,
            Err(rc) => return rc,
        };
        if busy.iter().any(|&b| b) {
            let mut copy = masked(requests, &busy);
            // SAFETY: the copy has incount requests; the user's outputs.
            let rc = unsafe {
                crate::p2p::some(
                    incount,
                    copy.as_mut_ptr(),
                    outcount,
                    indices,
                    statuses,
                    true,
                )
            };
            unmask(requests, &copy, &busy);
            // SAFETY: MPI wrote outcount.
            unsafe {
                if rc == 0 && *outcount == mpi::undefined() {
                    *outcount = 0; // a request with a check in flight is still active
                }
            }
            return rc;
        }
    }
    // SAFETY: the user's arguments.
    unsafe { crate::p2p::some(incount, requests, outcount, indices, statuses, true) }
}

/// The user's handler of a communicator with the point-to-point checker's
/// own (`mpi::errhandler`) is kept by the checker, whose handler stays.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_errhandler(comm: MPI_Comm, eh: MPI_Errhandler) -> c_int {
    match mpi::errhandler::user_set(comm, eh) {
        Some(rc) => rc,
        // SAFETY: the user's arguments.
        None => unsafe { PMPI_Comm_set_errhandler(comm, eh) },
    }
}

/// The user's handler (a new reference), not the checker's.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_errhandler(comm: MPI_Comm, eh: *mut MPI_Errhandler) -> c_int {
    if eh.is_null() {
        // SAFETY: the user's arguments (MPI reports the null pointer).
        return unsafe { PMPI_Comm_get_errhandler(comm, eh) };
    }
    match mpi::errhandler::user_get(comm) {
        Some(h) => {
            // SAFETY: the user's output (not null).
            unsafe { *eh = h };
            0
        }
        // SAFETY: the user's arguments.
        None => unsafe { PMPI_Comm_get_errhandler(comm, eh) },
    }
}
