//! The polled forms of the blocking calls: each posts its nonblocking
//! form and polls it (`crate::watchdog::poll`), marked as a wait the hang
//! analysis (`crate::hang`) can describe when the timeout asks.

use crate::hang::{any_source, any_tag, forget_freed, keys_of, mark, on, Item, Kind, Mark};
use crate::mpi::{self, bits, comm_world};
use crate::sys::*;
use crate::watchdog;
use std::ffi::{c_int, c_void};

fn ok(rc: c_int) -> Result<(), c_int> {
    if rc == 0 {
        Ok(())
    } else {
        Err(rc)
    }
}

fn code(r: Result<(), c_int>) -> c_int {
    r.err().unwrap_or(0)
}

fn item(call: &'static str, kind: Kind, comm: MPI_Comm, peer: c_int, tag: c_int) -> Item {
    Item {
        call,
        kind,
        comm: bits(comm),
        peer,
        tag,
        req: 0,
    }
}

/// A blocking call made of one nonblocking operation (`start` posts it)
/// and a polled `PMPI_Test` with the user's status.
///
/// # Safety
/// `start` posts a valid operation; `status` is the user's.
pub unsafe fn one(
    call: &'static str,
    kind: Kind,
    comm: MPI_Comm,
    peer: c_int,
    tag: c_int,
    status: *mut MPI_Status,
    start: impl FnOnce(*mut MPI_Request) -> c_int,
) -> c_int {
    let mut req = mpi::request_null();
    let rc = start(&mut req);
    crate::threads::release();
    if rc != 0 {
        return rc;
    }
    let it = Item {
        req: bits(req),
        ..item(call, kind, comm, peer, tag)
    };
    let _m = mark(Mark::Items {
        call,
        items: [Some(it), None],
    });
    let mut flag: c_int = 0;
    // SAFETY: the request just posted; the user's status.
    code(watchdog::poll(|| {
        ok(unsafe { PMPI_Test(&mut req, &mut flag, status) })?;
        Ok(flag != 0)
    }))
}

/// `MPI_Probe`, polled.
///
/// # Safety
/// The user's arguments of MPI_Probe.
pub unsafe fn probe(source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
    let _m = mark(Mark::Items {
        call: "MPI_Probe",
        items: [
            Some(item("MPI_Probe", Kind::Probe, comm, source, tag)),
            None,
        ],
    });
    let mut flag: c_int = 0;
    // SAFETY: the user's arguments.
    code(watchdog::poll(|| {
        ok(unsafe { PMPI_Iprobe(source, tag, comm, &mut flag, status) })?;
        Ok(flag != 0)
    }))
}

/// `MPI_Mprobe`, polled: `attempt` is one `PMPI_Improbe` (with what goes
/// with a match), giving its code and whether it matched.
pub fn mprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mut attempt: impl FnMut() -> (c_int, bool),
) -> c_int {
    let _m = mark(Mark::Items {
        call: "MPI_Mprobe",
        items: [
            Some(item("MPI_Mprobe", Kind::Probe, comm, source, tag)),
            None,
        ],
    });
    code(watchdog::poll(|| {
        let (rc, matched) = attempt();
        ok(rc)?;
        Ok(matched)
    }))
}

/// A send and a receive polled together (`MPI_Sendrecv`): `recv` and
/// `send` post them. An error of one ends the call with that error (the
/// other request is freed: MPI completes it).
///
/// # Safety
/// The closures post valid operations; `status` is the user's.
#[allow(clippy::too_many_arguments)]
pub unsafe fn pair(
    call: &'static str,
    comm: MPI_Comm,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    status: *mut MPI_Status,
    recv: impl FnOnce(*mut MPI_Request) -> c_int,
    send: impl FnOnce(*mut MPI_Request) -> c_int,
) -> c_int {
    let mut r = [mpi::request_null(); 2];
    let rc = recv(&mut r[0]);
    if rc != 0 {
        return rc;
    }
    let rc = send(&mut r[1]);
    crate::threads::release();
    if rc != 0 {
        // SAFETY: the receive just posted (MPI completes it).
        unsafe { PMPI_Request_free(&mut r[0]) };
        return rc;
    }
    let _m = mark(Mark::Items {
        call,
        items: [
            Some(Item {
                req: bits(r[1]),
                ..item(call, Kind::Send, comm, dest, sendtag)
            }),
            Some(Item {
                req: bits(r[0]),
                ..item(call, Kind::Recv, comm, source, recvtag)
            }),
        ],
    });
    let null = bits(mpi::request_null());
    let mut flag: c_int = 0;
    let out = watchdog::poll(|| {
        if bits(r[0]) != null {
            // SAFETY: our receive; the user's status.
            ok(unsafe { PMPI_Test(&mut r[0], &mut flag, status) })?;
        }
        if bits(r[1]) != null {
            // SAFETY: our send.
            ok(unsafe { PMPI_Test(&mut r[1], &mut flag, RSMPI_STATUS_IGNORE) })?;
        }
        Ok(bits(r[0]) == null && bits(r[1]) == null)
    });
    if out.is_err() {
        for q in r.iter_mut() {
            if bits(*q) != null {
                // SAFETY: our request, still active.
                unsafe { PMPI_Request_free(q) };
            }
        }
    }
    code(out)
}

/// `MPI_Sendrecv_replace`: the buffer is packed, sent from the copy and
/// received in place (`None`: it could not be packed; the caller makes
/// the blocking call).
///
/// # Safety
/// The user's arguments of MPI_Sendrecv_replace.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    t: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> Option<c_int> {
    let mut size: c_int = 0;
    // SAFETY: a query of the user's (count, datatype).
    if unsafe { PMPI_Pack_size(count, t, comm, &mut size) } != 0 {
        return None;
    }
    let mut tmp = vec![0u8; size.max(1) as usize];
    let mut pos: c_int = 0;
    // SAFETY: tmp holds size bytes.
    let rc = unsafe {
        PMPI_Pack(
            buf,
            count,
            t,
            tmp.as_mut_ptr() as *mut c_void,
            size,
            &mut pos,
            comm,
        )
    };
    if rc != 0 {
        return None;
    }
    let p = tmp.as_ptr();
    // SAFETY: the user's buffer; the copy, kept until the send completes
    // (leaked when the call fails: a freed send may still read it).
    let rc = unsafe {
        pair(
            "MPI_Sendrecv_replace",
            comm,
            dest,
            sendtag,
            source,
            recvtag,
            status,
            |r| PMPI_Irecv(buf, count, t, source, recvtag, comm, r),
            |r| {
                PMPI_Isend(
                    p as *const c_void,
                    pos,
                    mpi::packed(),
                    dest,
                    sendtag,
                    comm,
                    r,
                )
            },
        )
    };
    if rc != 0 {
        std::mem::forget(tmp);
    }
    Some(rc)
}

/// Whether the operation of a request is complete (not freed:
/// `MPI_Request_get_status` makes progress and changes nothing); its
/// status then goes to `seen`.
fn complete(req: MPI_Request, seen: &mut Option<MPI_Status>) -> Result<bool, c_int> {
    let mut flag: c_int = 0;
    // SAFETY: all-zero bytes are a valid MPI_Status (plain integers).
    let mut st: MPI_Status = unsafe { std::mem::zeroed() };
    // SAFETY: a request of the user's call, and a status to write.
    ok(unsafe { PMPI_Request_get_status(req, &mut flag, &mut st) })?;
    if flag != 0 {
        *seen = Some(st);
    }
    Ok(flag != 0)
}

/// MPICH 5.0's `MPI_Wait`/`MPI_Waitall` return the empty status (source
/// `MPI_ANY_SOURCE`, tag `MPI_ANY_TAG`) for a persistent request whose
/// completion `MPI_Request_get_status` saw first; the status that call
/// gave is the operation's. Puts it back where the wait wrote the empty
/// one, keeping the wait's `MPI_ERROR` field.
///
/// # Safety
/// `out` is `MPI_STATUS(ES)_IGNORE` or a status the wait wrote.
unsafe fn restore_status(out: *mut MPI_Status, seen: Option<MPI_Status>) {
    let empty = |s: &MPI_Status| s.MPI_SOURCE == any_source() && s.MPI_TAG == any_tag();
    // SAFETY: reads mpi-sys's copies of the ignore constants.
    let ignored = unsafe { out == RSMPI_STATUS_IGNORE || out == RSMPI_STATUSES_IGNORE };
    let Some(seen) = seen else { return };
    if out.is_null() || ignored || empty(&seen) {
        return;
    }
    // SAFETY: `out` is a status the wait wrote (checked above).
    let out = unsafe { &mut *out };
    if empty(out) {
        let error = out.MPI_ERROR;
        *out = seen;
        out.MPI_ERROR = error;
    }
}

/// `MPI_Wait`, polled: `MPI_Request_get_status` until the request is
/// complete, then `PMPI_Wait` itself (which returns at once, with its
/// status and error as ever).
///
/// # Safety
/// The user's arguments of MPI_Wait.
pub unsafe fn wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    if !on() {
        // SAFETY: the user's arguments.
        return unsafe { PMPI_Wait(request, status) };
    }
    // SAFETY: the user's request.
    let keys = [bits(unsafe { *request })];
    let mut seen = None;
    {
        let _m = mark(Mark::Requests {
            call: "MPI_Wait",
            ptr: request,
            count: 1,
        });
        // SAFETY: the user's request.
        let _ = watchdog::poll(|| complete(unsafe { *request }, &mut seen));
    }
    // SAFETY: the user's arguments.
    let rc = unsafe { PMPI_Wait(request, status) };
    // SAFETY: the status MPI_Wait wrote (or an ignore constant).
    unsafe { restore_status(status, seen) };
    forget_freed(&keys, request);
    rc
}

/// `MPI_Test` (the request forgotten when it completes).
///
/// # Safety
/// The user's arguments of MPI_Test.
pub unsafe fn test(request: *mut MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
    // SAFETY: the user's request.
    let keys = [bits(unsafe { *request })];
    // SAFETY: the user's arguments.
    let rc = unsafe { PMPI_Test(request, flag, status) };
    forget_freed(&keys, request);
    rc
}

/// `MPI_Waitall`, polled as `MPI_Wait` is, then `PMPI_Waitall` itself.
///
/// # Safety
/// The user's arguments of MPI_Waitall.
pub unsafe fn waitall(
    count: c_int,
    requests: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> c_int {
    if !on() {
        // SAFETY: the user's arguments.
        return unsafe { PMPI_Waitall(count, requests, statuses) };
    }
    let keys = keys_of(count, requests);
    let n = count.max(0) as usize;
    let mut seen = vec![None; n];
    {
        let _m = mark(Mark::Requests {
            call: "MPI_Waitall",
            ptr: requests,
            count: n,
        });
        let mut done = vec![false; n];
        let mut left = n;
        let _ = watchdog::poll(|| {
            for (i, d) in done.iter_mut().enumerate() {
                // SAFETY: the user's array holds count requests.
                if !*d && complete(unsafe { *requests.add(i) }, &mut seen[i])? {
                    *d = true;
                    left -= 1;
                }
            }
            Ok(left == 0)
        });
    }
    // SAFETY: the user's arguments.
    let rc = unsafe { PMPI_Waitall(count, requests, statuses) };
    // SAFETY: reads mpi-sys's copy of MPI_STATUSES_IGNORE.
    if statuses != unsafe { RSMPI_STATUSES_IGNORE } && !statuses.is_null() {
        for (i, s) in seen.into_iter().enumerate() {
            // SAFETY: the user's array holds count statuses, which
            // MPI_Waitall wrote.
            unsafe { restore_status(statuses.add(i), s) };
        }
    }
    forget_freed(&keys, requests);
    rc
}

/// `MPI_Testall` (the requests forgotten when they complete).
///
/// # Safety
/// The user's arguments of MPI_Testall.
pub unsafe fn testall(
    count: c_int,
    requests: *mut MPI_Request,
    flag: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    let keys = keys_of(count, requests);
    // SAFETY: the user's arguments.
    let rc = unsafe { PMPI_Testall(count, requests, flag, statuses) };
    forget_freed(&keys, requests);
    rc
}

/// `MPI_Waitany`, polled (`flag`: `MPI_Testany`, not polled).
///
/// # Safety
/// The user's arguments of MPI_Waitany / MPI_Testany.
pub unsafe fn any(
    count: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    flag: Option<*mut c_int>,
    status: *mut MPI_Status,
) -> c_int {
    let keys = keys_of(count, requests);
    let rc = match flag {
        // SAFETY: the user's arguments.
        Some(f) => unsafe { PMPI_Testany(count, requests, index, f, status) },
        // SAFETY: the user's arguments.
        None if !on() => unsafe { PMPI_Waitany(count, requests, index, status) },
        None => {
            let _m = mark(Mark::Requests {
                call: "MPI_Waitany",
                ptr: requests,
                count: count.max(0) as usize,
            });
            let mut flag: c_int = 0;
            // SAFETY: the user's arguments.
            code(watchdog::poll(|| {
                ok(unsafe { PMPI_Testany(count, requests, index, &mut flag, status) })?;
                Ok(flag != 0)
            }))
        }
    };
    forget_freed(&keys, requests);
    rc
}

/// `MPI_Waitsome`, polled (`test`: `MPI_Testsome`, not polled).
///
/// # Safety
/// The user's arguments of MPI_Waitsome / MPI_Testsome.
pub unsafe fn some(
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
    test: bool,
) -> c_int {
    let keys = keys_of(incount, requests);
    let rc = if test {
        // SAFETY: the user's arguments.
        unsafe { PMPI_Testsome(incount, requests, outcount, indices, statuses) }
    } else if !on() {
        // SAFETY: the user's arguments.
        unsafe { PMPI_Waitsome(incount, requests, outcount, indices, statuses) }
    } else {
        let _m = mark(Mark::Requests {
            call: "MPI_Waitsome",
            ptr: requests,
            count: incount.max(0) as usize,
        });
        // SAFETY: the user's arguments; MPI wrote outcount.
        code(watchdog::poll(|| {
            ok(unsafe { PMPI_Testsome(incount, requests, outcount, indices, statuses) })?;
            Ok(unsafe { *outcount } != 0)
        }))
    };
    forget_freed(&keys, requests);
    rc
}

/// `MPI_Finalize` first waits, polled and marked, in a barrier on the
/// checker's duplicate of `MPI_COMM_WORLD`: a rank that finalized answers
/// the others' queries.
pub fn finalize() {
    if !on() {
        return;
    }
    let Some(st) = mpi::state(comm_world()) else {
        return;
    };
    if st.unchecked {
        return;
    }
    barrier(st.dup, Mark::Finalize);
}

/// Waits visibly until every member of `comm` is in the program's
/// collective `call` too: a polled barrier on `dup`, the checker's
/// duplicate of `comm`. For `MPI_Comm_free` of a communicator with a
/// point-to-point channel, whose release settles the type exchange with
/// every member: a member that never frees it is then a reported hang
/// ("rank 1 waits for rank 0 in MPI_Comm_free(the_dup)"), not a silent
/// wait inside MPI's delete callbacks.
pub fn collective(call: &'static str, comm: MPI_Comm, dup: MPI_Comm) {
    if on() {
        let comm = bits(comm);
        barrier(dup, Mark::Collective { call, comm });
    }
}

/// A barrier on `dup` (a checker's duplicate), polled, with this thread
/// marked as waiting in `m`.
fn barrier(dup: MPI_Comm, m: Mark) {
    let mut req = mpi::request_null();
    // SAFETY: the checker's duplicate.
    if unsafe { PMPI_Ibarrier(dup, &mut req) } != 0 {
        return;
    }
    let _m = mark(m);
    let mut flag: c_int = 0;
    // SAFETY: the request just made.
    let _ = watchdog::poll(|| {
        ok(unsafe { PMPI_Test(&mut req, &mut flag, RSMPI_STATUS_IGNORE) })?;
        Ok(flag != 0)
    });
}
