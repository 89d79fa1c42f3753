//! The interposed calls whose bodies are written out by hand (the table's
//! `own` shape, `calls.txt`): the process's start and end, the objects
//! the checker keeps state for, the matched probes and persistent starts.
//! The completion calls are in `completion`.

use super::shape::{base, c_bytes, checked, on_object, string_hash};
use crate::check::Call;
use crate::datatypes;
use crate::mpi;
use crate::p2p;
use crate::p2p::status_or;
use crate::record::{hash_words, Coll};
use crate::site::Frames;
use crate::sys::*;
use crate::types;
use std::ffi::{c_char, c_int, c_void};

pub(crate) use super::completion::*;

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

pub(crate) unsafe fn init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
    refuse_another_mpi();
    // SAFETY: the user's arguments.
    let rc = unsafe { PMPI_Init(argc, argv) };
    if rc == 0 {
        mpi::world_rank();
        crate::hang::known(mpi::comm_world());
        oversubscription();
        if let Some(st) = mpi::state(mpi::comm_world()) {
            mpi::channel::open(st.dup);
            crate::batch::at_init(st.dup);
        }
        crate::p2p::setup(mpi::comm_world(), None);
    }
    rc
}

pub(crate) unsafe fn init_thread(
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
        oversubscription();
        // SAFETY: MPI wrote the level provided; reads mpi-sys's copy of
        // MPI_THREAD_MULTIPLE.
        crate::threads::provided(unsafe { *provided }, unsafe { RSMPI_THREAD_MULTIPLE });
        if let Some(st) = mpi::state(mpi::comm_world()) {
            mpi::channel::open(st.dup);
            crate::batch::at_init(st.dup);
        }
        crate::p2p::setup(mpi::comm_world(), None);
    }
    rc
}

/// Whether the polls must yield: more ranks on this node than cores (a
/// collective every rank makes in `MPI_Init`, skipped when the checker is
/// off).
fn oversubscription() {
    if crate::report::config().mode != crate::report::Mode::Off {
        crate::watchdog::set_oversubscribed(mpi::oversubscribed());
    }
}

/// The free of a communicator with a point-to-point channel first waits,
/// visibly, for every member (`crate::polled::collective`): the channel's
/// release inside the free settles with all of them.
pub(crate) unsafe fn comm_free(comm: *mut MPI_Comm) -> c_int {
    if !comm.is_null() {
        // SAFETY: the user's communicator handle.
        let c = unsafe { *comm };
        crate::batch::flush_comm(c);
        if let Some(dup) = crate::p2p::channel_dup(c) {
            crate::polled::collective("MPI_Comm_free", c, dup);
        }
    }
    // SAFETY: the user's argument.
    unsafe { PMPI_Comm_free(comm) }
}

/// `MPIX_CHECK_STATS=1`: this rank's checked collective calls and the
/// messages their verification sent.
fn print_stats() {
    if !crate::report::stats_enabled() {
        return;
    }
    use std::sync::atomic::Ordering::Relaxed;
    let calls = crate::check::CHECKED.load(Relaxed);
    let sent = mpi::SENT.load(Relaxed);
    let full = crate::batch::FULL.load(Relaxed);
    // One write, so that the ranks' lines do not interleave.
    let line = format!(
        "mpix-check: world rank {}: {calls} checked collective calls, {sent} messages sent to verify them, {full} batches compared call by call, {:.3} messages per call\n",
        mpi::world_rank(),
        sent as f64 / calls.max(1) as f64
    );
    let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
}

pub(crate) unsafe fn finalize() -> c_int {
    // First the batched calls' verification (a rank an error stopped in
    // a batched call waits in its own for this one's), then every rank's
    // arrival, in a wait the hang watchdog sees (a rank that never comes
    // is reported there), then the lost messages and pending sends
    // (collective over the world).
    crate::batch::flush_all();
    print_stats();
    crate::polled::finalize();
    crate::p2p::lost::at_finalize();
    crate::datatypes::leaks_at_finalize();
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

pub(crate) unsafe fn comm_set_name(comm: MPI_Comm, name: *const c_char) -> c_int {
    // SAFETY: the user's arguments.
    let rc = unsafe { PMPI_Comm_set_name(comm, name as *mut c_char) };
    if rc == 0 {
        mpi::renamed(comm);
    }
    rc
}

/// A renamed type is described anew where the checker names it by a
/// reference it keeps (`crate::sig::TYPES_RENAMED`).
pub(crate) unsafe fn type_set_name(datatype: MPI_Datatype, name: *const c_char) -> c_int {
    // SAFETY: the user's arguments.
    let rc = unsafe { PMPI_Type_set_name(datatype, name as *mut c_char) };
    if rc == 0 {
        crate::sig::TYPES_RENAMED.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }
    rc
}

pub(crate) unsafe fn op_create(f: MPI_User_function, commute: c_int, op: *mut MPI_Op) -> c_int {
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
/// caches of type signatures start over. The handle must be live (a
/// second free is reported, then MPI's own error follows).
pub(crate) unsafe fn type_free(datatype: *mut MPI_Datatype) -> c_int {
    crate::sig::TYPES_FREED.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    let own = crate::internal::active();
    if own {
        crate::sig::count_own_free();
    }
    // SAFETY: the user's handle (MPI refuses a null pointer itself).
    let t = (!datatype.is_null()).then(|| unsafe { *datatype });
    if let Some(t) = t {
        datatypes::handle_usable("MPI_Type_free", t);
    }
    let rc = match t {
        // (A second free is not kept: `keep` takes live types only.)
        Some(t) if crate::batch::keep(t) || crate::p2p::keep(t) => {
            // SAFETY: the user's handle, freed later (`batch::keep`,
            // `p2p::keep`).
            unsafe { *datatype = mpi::datatype_null() };
            0
        }
        // SAFETY: the user's arguments.
        _ => unsafe { PMPI_Type_free(datatype) },
    };
    if let (0, Some(t)) = (rc, t) {
        let site = if own {
            Frames::default()
        } else {
            Frames::capture()
        };
        types::freed(mpi::bits(t), site, own);
    }
    rc
}

/// `MPI_Type_commit`: the handle must be live; committed, the registry
/// knows it.
pub(crate) unsafe fn type_commit(datatype: *mut MPI_Datatype) -> c_int {
    // SAFETY: the user's handle (MPI refuses a null pointer itself).
    let t = (!datatype.is_null()).then(|| unsafe { *datatype });
    if let Some(t) = t {
        datatypes::handle_usable("MPI_Type_commit", t);
    }
    // SAFETY: the user's arguments.
    let rc = unsafe { PMPI_Type_commit(datatype) };
    if let (0, Some(t)) = (rc, t) {
        types::committed(mpi::bits(t));
    }
    rc
}

/// `MPI_Type_get_contents`: the derived types it returns are the
/// program's to free (MPI-4.1 §5.1.13), each a reference more.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn type_get_contents(
    datatype: MPI_Datatype,
    max_integers: c_int,
    max_addresses: c_int,
    max_datatypes: c_int,
    array_of_integers: *mut c_int,
    array_of_addresses: *mut MPI_Aint,
    array_of_datatypes: *mut MPI_Datatype,
) -> c_int {
    // SAFETY: the user's arguments.
    let rc = unsafe {
        PMPI_Type_get_contents(
            datatype,
            max_integers,
            max_addresses,
            max_datatypes,
            array_of_integers,
            array_of_addresses,
            array_of_datatypes,
        )
    };
    contents_returned(rc, datatype, max_datatypes.into(), array_of_datatypes);
    rc
}

/// `MPI_Type_get_contents_c`, as `type_get_contents`.
#[cfg(mpi_large_count)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn type_get_contents_c(
    datatype: MPI_Datatype,
    max_integers: MPI_Count,
    max_addresses: MPI_Count,
    max_large_counts: MPI_Count,
    max_datatypes: MPI_Count,
    array_of_integers: *mut c_int,
    array_of_addresses: *mut MPI_Aint,
    array_of_large_counts: *mut MPI_Count,
    array_of_datatypes: *mut MPI_Datatype,
) -> c_int {
    // SAFETY: the user's arguments.
    let rc = unsafe {
        PMPI_Type_get_contents_c(
            datatype,
            max_integers,
            max_addresses,
            max_large_counts,
            max_datatypes,
            array_of_integers,
            array_of_addresses,
            array_of_large_counts,
            array_of_datatypes,
        )
    };
    #[allow(clippy::unnecessary_cast)] // MPI_Count's width is the MPI's choice
    contents_returned(rc, datatype, max_datatypes as i64, array_of_datatypes);
    rc
}

/// The derived types a successful `MPI_Type_get_contents` wrote, told to
/// the registry (not the library's or the checker's own).
fn contents_returned(rc: c_int, t: MPI_Datatype, max: i64, out: *const MPI_Datatype) {
    if rc != 0 || out.is_null() || crate::internal::active() {
        return;
    }
    let n = mpi::envelope_datatypes(t).min(max.max(0) as usize);
    for i in 0..n {
        // SAFETY: MPI wrote the first n entries.
        let r = unsafe { *out.add(i) };
        if mpix_marshal::predefined_code(r).is_none() {
            types::returned(mpi::bits(r), "MPI_Type_get_contents", Frames::capture());
        }
    }
}

pub(crate) unsafe fn op_free(op: *mut MPI_Op) -> c_int {
    // SAFETY: the user's op.
    mpi::op_freed(unsafe { *op });
    // SAFETY: the user's arguments.
    unsafe { PMPI_Op_free(op) }
}

pub(crate) unsafe fn win_free(win: *mut MPI_Win) -> c_int {
    // SAFETY: the user's window.
    let w = unsafe { *win };
    let rc = checked(on_object(Coll::WinFree, mpi::Object::Win(w)), || unsafe {
        PMPI_Win_free(win)
    });
    if rc == 0 {
        mpi::object_freed(mpi::bits(w));
        crate::rma::window_freed(mpi::bits(w));
    }
    rc
}

pub(crate) unsafe fn file_open(
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
    let rc = checked(call, || unsafe {
        PMPI_File_open(comm, filename, amode, info, fh)
    });
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

/// `MPI_File_set_view`: checked as a collective on the file (the data
/// representation and the etypes' signatures agree), its filetype against
/// its etype (`crate::io`).
pub(crate) unsafe fn file_set_view(
    fh: MPI_File,
    disp: MPI_Offset,
    etype: MPI_Datatype,
    filetype: MPI_Datatype,
    datarep: *const c_char,
    info: MPI_Info,
) -> c_int {
    let call = Call {
        extra: string_hash(datarep),
        scount: 1,
        stype: etype,
        ..on_object(Coll::FileSetView, mpi::Object::File(fh))
    };
    crate::io::set_view(fh, etype, filetype, || {
        checked(call, || unsafe {
            PMPI_File_set_view(fh, disp, etype, filetype, datarep as *mut c_char, info)
        })
    })
}

pub(crate) unsafe fn file_close(fh: *mut MPI_File) -> c_int {
    // SAFETY: the user's file handle.
    let f = unsafe { *fh };
    let rc = checked(
        on_object(Coll::FileClose, mpi::Object::File(f)),
        || unsafe { PMPI_File_close(fh) },
    );
    if rc == 0 {
        mpi::object_freed(mpi::bits(f));
        crate::io::file_closed(mpi::bits(f));
    }
    rc
}

/// The user's handler of a communicator with the point-to-point checker's
/// own (`mpi::errhandler`) is kept by the checker, whose handler stays.
pub(crate) unsafe fn comm_set_errhandler(comm: MPI_Comm, eh: MPI_Errhandler) -> c_int {
    mpi::errhandler::note_set();
    match mpi::errhandler::user_set(comm, eh) {
        Some(rc) => rc,
        // SAFETY: the user's arguments.
        None => unsafe { PMPI_Comm_set_errhandler(comm, eh) },
    }
}

/// The user's handler (a new reference), not the checker's.
pub(crate) unsafe fn comm_get_errhandler(comm: MPI_Comm, eh: *mut MPI_Errhandler) -> c_int {
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

// ---- matched probes, persistent starts, cancels ----

pub(crate) unsafe fn mprobe(
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
            unsafe { p2p::matched(comm, &*st, *message) };
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
            unsafe { p2p::matched(comm, &*st, *message) };
        }
        (rc, flag != 0)
    };
    crate::polled::mprobe(source, tag, comm, attempt)
}

/// `MPI_Probe` takes no message (no check): wrapped to wait visibly.
pub(crate) unsafe fn probe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the user's arguments.
    unsafe {
        if crate::hang::on() && source != p2p::proc_null() {
            crate::polled::probe(source, tag, comm, status)
        } else {
            PMPI_Probe(source, tag, comm, status)
        }
    }
}

pub(crate) unsafe fn improbe(
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
        unsafe { p2p::matched(comm, &*st, *message) };
    }
    rc
}

pub(crate) unsafe fn start(request: *mut MPI_Request) -> c_int {
    let _s = crate::threads::enter();
    // SAFETY: the user's request.
    let r = unsafe { *request };
    let key = p2p::starting(r);
    // SAFETY: the user's argument.
    let rc = unsafe { PMPI_Start(request) };
    p2p::started(key, rc, r);
    rc
}

pub(crate) unsafe fn startall(count: c_int, requests: *mut MPI_Request) -> c_int {
    let _s = crate::threads::enter();
    let n = count.max(0) as usize;
    // SAFETY: the user's array holds count requests.
    let reqs: Vec<MPI_Request> = (0..n).map(|i| unsafe { *requests.add(i) }).collect();
    let keys: Vec<_> = reqs.iter().map(|&r| p2p::starting(r)).collect();
    // SAFETY: the user's arguments.
    let rc = unsafe { PMPI_Startall(count, requests) };
    for (k, &r) in keys.into_iter().zip(&reqs) {
        p2p::started(k, rc, r);
    }
    rc
}

/// A cancel of a nonblocking send is watched: when MPI cancels the
/// message, its companion is cancelled at the request's completion.
pub(crate) unsafe fn cancel(request: *mut MPI_Request) -> c_int {
    // SAFETY: the user's request.
    p2p::cancel_requested(unsafe { *request });
    // SAFETY: the user's argument.
    unsafe { PMPI_Cancel(request) }
}
