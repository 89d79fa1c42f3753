//! Checks of the datatype arguments themselves (issue 30), as opposed to
//! the agreement between ranks that `check` and `p2p` verify.
//!
//! *Receives into overlapping entries.* A datatype may list two entries at
//! overlapping bytes, but "the use of such a datatype in a receive
//! operation is erroneous" (MPI-4.1 §5.1): the same byte would be written
//! twice, in an order MPI does not define. Each (datatype, count) a
//! receive names is asked once (`mpix_marshal::overlapping_entries`,
//! decided on the constructor tree without expanding the typemap); a
//! type found to overlap is reported the first time it is received into,
//! with the two entries' places in its tree, then the communicator's
//! error handler is called as for every finding (the receive is not
//! made: the call returns the error code, as for an invalid argument).

use crate::check::Call;
use crate::mpi;
use crate::report::{self, Mode, Report};
use crate::sig::{count_path, describe, frees};
use crate::site;
use crate::sys::*;
use std::cell::RefCell;
use std::collections::HashSet;
use std::ffi::c_int;
use std::sync::Mutex;

/// How many (type, count) pairs found clean each thread remembers.
const RECENT: usize = 16;

thread_local! {
    /// Recent (type, count) pairs with no overlap, valid while no type
    /// was freed (`TYPES_FREED`, as the signature cache).
    static CLEAN: RefCell<(u64, Vec<(u64, i64)>)> = const { RefCell::new((0, Vec::new())) };
}

/// The (type, `TYPES_FREED`) pairs already reported: each type once.
static REPORTED: Mutex<Option<HashSet<(u64, u64)>>> = Mutex::new(None);

/// Checks the buffer (count, t) that `call` receives into on `comm`:
/// Err(the code the user's error handler was given) when it overlaps.
pub fn receive_buffer(
    call: &'static str,
    comm: MPI_Comm,
    count: i64,
    t: MPI_Datatype,
) -> Result<(), c_int> {
    check_buffer(call, comm, count, t)
}

fn check_buffer(call: &str, comm: MPI_Comm, count: i64, t: MPI_Datatype) -> Result<(), c_int> {
    if count <= 0 || report::config().mode == Mode::Off || crate::internal::active() {
        return Ok(());
    }
    if mpix_marshal::predefined_code(t).is_some() {
        return Ok(()); // a predefined type's entries never overlap
    }
    let (key, before) = (mpi::bits(t), frees());
    if is_clean(key, count, before.0) {
        return Ok(());
    }
    // As one of the checker's own calls: the frees of the handles
    // MPI_Type_get_contents gives the library on the way are counted as
    // this thread's own.
    let found = crate::internal::within(|| mpix_marshal::overlapping_entries(count as u64, t));
    let found = match found {
        Ok(Some(o)) => o,
        // No overlap, or a type the library cannot read (MPI's own check
        // of the call follows).
        Ok(None) | Err(_) => {
            remember_clean(key, count, epoch_after(before));
            return Ok(());
        }
    };
    let epoch = before.0;
    if !first_report(key, epoch) {
        return Ok(());
    }
    overlap_report(call, comm, count, t, &found).emit(mpi::world_rank_cached());
    if report::config().mode == Mode::Warn {
        return Ok(());
    }
    Err(mpi::raise_code(comm, None, mpi::datatype_error_code()))
}

/// The `TYPES_FREED` count a verdict made since `before` holds for: the
/// count now when every free since was this thread's own (references the
/// library dropped, no type of the program's), else the one before.
fn epoch_after(before: (u64, u64)) -> u64 {
    let now = frees();
    if now.0 - before.0 == now.1 - before.1 {
        now.0
    } else {
        before.0
    }
}

/// Checks the receive buffer of the collective `call` on an
/// intracommunicator (`Call::receive_buffer`), after the call's own check
/// found the ranks consistent. A collective is still made when the error
/// handler returns (the other ranks are in it): Err then carries the code
/// to return after it.
pub fn collective_buffer(call: &Call) -> Result<(), c_int> {
    // Window and file calls (on no communicator of the program's) have
    // no such buffer; nor has a call on MPI_COMM_NULL (MPI's error).
    if call.object.is_some() || mpi::bits(call.comm) == mpi::bits(mpi::comm_null()) {
        return Ok(());
    }
    if !call.has_receive_buffer() {
        return Ok(());
    }
    let mut inter = 0;
    // SAFETY: a local query of the user's communicator.
    if unsafe { PMPI_Comm_test_inter(call.comm, &mut inter) } != 0 || inter != 0 {
        return Ok(());
    }
    let (rank, size) = mpi::rank_size(call.comm);
    match call.receive_buffer(rank as i64, size as i64) {
        Some((count, t)) => check_buffer(&call.name(), call.comm, count, t),
        None => Ok(()),
    }
}

fn is_clean(key: u64, count: i64, epoch: u64) -> bool {
    CLEAN.with(|c| {
        let c = c.borrow();
        c.0 == epoch && c.1.contains(&(key, count))
    })
}

fn remember_clean(key: u64, count: i64, epoch: u64) {
    CLEAN.with(|c| {
        let mut c = c.borrow_mut();
        if c.0 != epoch {
            *c = (epoch, Vec::new());
        }
        if c.1.len() == RECENT {
            c.1.remove(0);
        }
        c.1.push((key, count));
    });
}

/// Whether (key, epoch) is reported for the first time (and now marked).
fn first_report(key: u64, epoch: u64) -> bool {
    let mut r = REPORTED.lock().unwrap_or_else(|e| e.into_inner());
    r.get_or_insert_with(HashSet::new).insert((key, epoch))
}

/// The report of a receive into (count, t), whose entries overlap as `o` says.
fn overlap_report(
    call: &str,
    comm: MPI_Comm,
    count: i64,
    t: MPI_Datatype,
    o: &mpix_marshal::Overlap,
) -> Report {
    let (rank, size) = mpi::rank_size(comm);
    let me = format!("rank {rank}");
    let mut details = vec![format!(
        "{me} receives into (count, datatype) = {}",
        describe(count, t)
    )];
    let mut fields = vec![("byte", o.byte.to_string())];
    match &o.entries {
        Some([a, b]) => {
            details.push(format!(
                "elements {} and {} of the buffer both hold its byte {}:",
                a.index, b.index, o.byte
            ));
            for e in [a, b] {
                let path = if count > 1 {
                    count_path(&with_copy(e), count, true)
                } else {
                    count_path(&e.path, 1, false)
                };
                details.push(format!(
                    "  element {}: {} ({} at byte {})",
                    e.index, path, e.basic, e.displacement
                ));
            }
            fields.push(("first_element", a.index.to_string()));
            fields.push(("second_element", b.index.to_string()));
        }
        None => details.push(format!(
            "two of its elements hold its byte {} (the typemap is too long to name them)",
            o.byte
        )),
    }
    details.push(site::site_line(&me, call, &site::call_site()));
    Report {
        call: call.to_string(),
        comm: mpi::comm_name(comm, size),
        seq: 0,
        rank,
        size,
        kind: "datatype-overlap",
        summary:
            "the receive buffer's datatype has overlapping entries (a receive into it is erroneous)"
                .to_string(),
        details,
        fields,
    }
}

/// An entry's path as inside a contiguous type of the count, the terms
/// `count_path` reads for a count above 1.
fn with_copy(e: &mpix_marshal::OverlapEntry) -> String {
    match e.path.strip_prefix("root ") {
        Some(inner) => format!("root MPI_COMBINER_CONTIGUOUS copy {} > {inner}", e.copy),
        None => e.path.clone(),
    }
}
