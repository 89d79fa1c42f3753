//! Communicator calls for the type exchange (`crate::exchange`): private
//! duplicates, the communicator keyval the exchange hangs on, point-to-point
//! messages of bytes (matched probes, so that no other thread can take a
//! probed message), broadcasts and an allgather. Each call is checked; the
//! handles are plain values (`CommHandle` lets them cross threads).
// The ABI build declares the predefined handles as constants, which need
// no unsafe block; mpi-sys declares them as extern statics, which do.
#![cfg_attr(feature = "abi", allow(unused_unsafe))]

use super::check;
use super::sys;
use crate::error::Result;
use std::os::raw::{c_int, c_void};
use std::sync::OnceLock;

pub use super::sys::{MPI_Comm as Comm, MPI_Status as Status};

/// A communicator handle that may be kept in shared state.
#[derive(Clone, Copy, Debug)]
pub struct CommHandle(pub Comm);

// SAFETY: an MPI communicator handle is an integer (MPICH) or a pointer to
// an object MPI owns (Open MPI); MPI allows any thread to use it under
// MPI_THREAD_MULTIPLE, and the exchange serializes what must be ordered.
unsafe impl Send for CommHandle {}
// SAFETY: as for Send: the handle is never dereferenced by Rust.
unsafe impl Sync for CommHandle {}

/// `MPI_COMM_WORLD`.
pub fn comm_world() -> Comm {
    // SAFETY: reading an initialized constant of the MPI binding.
    unsafe { sys::RSMPI_COMM_WORLD }
}

/// `MPI_COMM_NULL`.
pub fn comm_null() -> Comm {
    // SAFETY: reading an initialized constant of the MPI binding.
    unsafe { sys::RSMPI_COMM_NULL }
}

/// `MPI_PROC_NULL`, `MPI_ANY_SOURCE`, `MPI_ANY_TAG`.
pub fn proc_null() -> c_int {
    // SAFETY: reading an initialized constant of the MPI binding.
    unsafe { sys::RSMPI_PROC_NULL }
}
pub fn any_source() -> c_int {
    // SAFETY: reading an initialized constant of the MPI binding.
    unsafe { sys::RSMPI_ANY_SOURCE }
}
pub fn any_tag() -> c_int {
    // SAFETY: reading an initialized constant of the MPI binding.
    unsafe { sys::RSMPI_ANY_TAG }
}

fn bytes_type() -> super::Datatype {
    // SAFETY: reading an initialized constant of the MPI binding.
    unsafe { sys::RSMPI_UINT8_T }
}

/// A handle's bits, to compare communicator handles.
pub fn comm_bits(c: Comm) -> u64 {
    // SAFETY: MPI_Comm is a plain 4- or 8-byte handle; reading it as an
    // integer of its size is valid.
    unsafe {
        match std::mem::size_of::<Comm>() {
            4 => std::mem::transmute_copy::<Comm, u32>(&c) as u64,
            8 => std::mem::transmute_copy::<Comm, u64>(&c),
            _ => unreachable!("MPI_Comm is 4 or 8 bytes"),
        }
    }
}

/// Whether a status pointer is `MPI_STATUS_IGNORE` (or NULL).
pub fn is_status_ignore(p: *const Status) -> bool {
    // SAFETY: reading an initialized constant of the MPI binding.
    p.is_null() || std::ptr::eq(p, unsafe { sys::RSMPI_STATUS_IGNORE })
}

/// An empty status to be filled by MPI.
pub fn empty_status() -> Status {
    // SAFETY: MPI_Status is a C struct of integers: all zeros is a value.
    unsafe { std::mem::zeroed() }
}

/// `MPI_Comm_dup`.
pub fn dup(c: Comm) -> Result<Comm> {
    let mut out = comm_null();
    // SAFETY: `out` is a valid out-pointer.
    let rc = unsafe { sys::MPI_Comm_dup(c, &mut out) };
    check(rc, "MPI_Comm_dup")?;
    Ok(out)
}

/// `MPI_Comm_free` of a communicator the library made.
pub fn free(c: Comm) -> Result<()> {
    let mut c = c;
    // SAFETY: `c` is a communicator the library made and frees once.
    check(unsafe { sys::MPI_Comm_free(&mut c) }, "MPI_Comm_free")
}

/// Whether `c` is an intercommunicator.
pub fn is_inter(c: Comm) -> Result<bool> {
    let mut flag = 0;
    // SAFETY: `flag` is a valid out-pointer.
    let rc = unsafe { sys::MPI_Comm_test_inter(c, &mut flag) };
    check(rc, "MPI_Comm_test_inter")?;
    Ok(flag != 0)
}

/// The number of peers a rank argument names: the size of the group, or
/// of the remote group of an intercommunicator.
pub fn peer_count(c: Comm, inter: bool) -> Result<c_int> {
    let mut n = 0;
    // SAFETY: `n` is a valid out-pointer.
    let rc = unsafe {
        if inter {
            sys::MPI_Comm_remote_size(c, &mut n)
        } else {
            sys::MPI_Comm_size(c, &mut n)
        }
    };
    check(rc, "MPI_Comm_size")?;
    Ok(n)
}

/// This process's rank in `c`.
pub fn rank(c: Comm) -> Result<c_int> {
    let mut r = 0;
    // SAFETY: `r` is a valid out-pointer.
    let rc = unsafe { sys::MPI_Comm_rank(c, &mut r) };
    check(rc, "MPI_Comm_rank")?;
    Ok(r)
}

/// `MPI_Allgather` of `mine` (the same length on every process) into
/// `all` (`mine.len()` bytes per peer).
pub fn allgather(mine: &[u8], all: &mut [u8], c: Comm) -> Result<()> {
    let n = mine.len() as c_int;
    // SAFETY: `mine` has n bytes and `all` room for n per peer (the caller
    // sized it by peer_count); both outlive the blocking call.
    let rc = unsafe {
        sys::MPI_Allgather(
            mine.as_ptr() as *const c_void,
            n,
            bytes_type(),
            all.as_mut_ptr() as *mut c_void,
            n,
            bytes_type(),
            c,
        )
    };
    check(rc, "MPI_Allgather")
}

/// `MPI_Bcast` of `buf` (the same length on every process).
pub fn bcast(buf: &mut [u8], root: c_int, c: Comm) -> Result<()> {
    let n = c_int::try_from(buf.len())
        .map_err(|_| crate::error::Error::invalid("a broadcast of more than 2^31 bytes"))?;
    // SAFETY: `buf` has n bytes and outlives the blocking call.
    let rc = unsafe { sys::MPI_Bcast(buf.as_mut_ptr() as *mut c_void, n, bytes_type(), root, c) };
    check(rc, "MPI_Bcast")
}

/// `MPI_Send` of a byte message.
pub fn send(buf: &[u8], dest: c_int, tag: c_int, c: Comm) -> Result<()> {
    let n = c_int::try_from(buf.len())
        .map_err(|_| crate::error::Error::invalid("a message of more than 2^31 bytes"))?;
    // SAFETY: `buf` has n bytes and outlives the blocking call.
    let rc = unsafe { sys::MPI_Send(buf.as_ptr() as *const c_void, n, bytes_type(), dest, tag, c) };
    check(rc, "MPI_Send")
}

/// A request the caller tests until it completes: a synchronous send that
/// owns its buffer, or a nonblocking barrier.
pub struct Request {
    request: sys::MPI_Request,
    buffer: Vec<u8>,
}

// SAFETY: a request handle is an integer (MPICH) or a pointer MPI owns
// (Open MPI); under MPI_THREAD_MULTIPLE any thread may test it, and the
// exchange tests each under a lock.
unsafe impl Send for Request {}

/// `MPI_Issend` of `buffer`, which the request keeps until the message is
/// received: a definition nobody has read yet stays with its sender.
pub fn issend(buffer: Vec<u8>, dest: c_int, tag: c_int, c: Comm) -> Result<Request> {
    let n = c_int::try_from(buffer.len())
        .map_err(|_| crate::error::Error::invalid("a message of more than 2^31 bytes"))?;
    // SAFETY: reading an initialized constant of the MPI binding.
    let mut request = unsafe { sys::RSMPI_REQUEST_NULL };
    // SAFETY: the buffer moves into the returned Request, which keeps it
    // (its heap block does not move) until the send completes, or leaks
    // it if dropped before (see Drop).
    let rc = unsafe {
        sys::MPI_Issend(
            buffer.as_ptr() as *const c_void,
            n,
            bytes_type(),
            dest,
            tag,
            c,
            &mut request,
        )
    };
    check(rc, "MPI_Issend")?;
    Ok(Request { request, buffer })
}

/// `MPI_Ibarrier`.
pub fn ibarrier(c: Comm) -> Result<Request> {
    // SAFETY: reading an initialized constant of the MPI binding.
    let mut request = unsafe { sys::RSMPI_REQUEST_NULL };
    // SAFETY: `request` is a valid out-pointer.
    let rc = unsafe { sys::MPI_Ibarrier(c, &mut request) };
    check(rc, "MPI_Ibarrier")?;
    Ok(Request {
        request,
        buffer: Vec::new(),
    })
}

impl Request {
    /// `MPI_Test`: whether the request has completed (then it is done for).
    pub fn test(&mut self) -> Result<bool> {
        // SAFETY: reading an initialized constant of the MPI binding.
        let null = unsafe { sys::RSMPI_REQUEST_NULL };
        if self.request == null {
            return Ok(true);
        }
        let mut flag = 0;
        // SAFETY: the request is live; MPI sets it to MPI_REQUEST_NULL when
        // it completes; the out-pointers are valid locals.
        let rc = unsafe { sys::MPI_Test(&mut self.request, &mut flag, sys::RSMPI_STATUS_IGNORE) };
        check(rc, "MPI_Test")?;
        Ok(flag != 0)
    }
}

impl Drop for Request {
    /// A request dropped before it completed (its peer never took the
    /// message: an error path, or MPI finalizing without it) is freed, and
    /// its buffer leaked, since MPI may still read it.
    fn drop(&mut self) {
        // SAFETY: reading an initialized constant of the MPI binding.
        let null = unsafe { sys::RSMPI_REQUEST_NULL };
        if self.request != null {
            if super::is_initialized() {
                // SAFETY: the request is live; freeing it lets MPI complete
                // it alone.
                let _ = unsafe { sys::MPI_Request_free(&mut self.request) };
            }
            std::mem::forget(std::mem::take(&mut self.buffer));
        }
    }
}

/// A message matched by a probe, to be received by `mrecv` (no other
/// receive can take it).
pub struct Matched {
    message: sys::MPI_Message,
    pub status: Status,
}

/// `MPI_Mprobe`: blocks until a message matches.
pub fn mprobe(source: c_int, tag: c_int, c: Comm) -> Result<Matched> {
    let mut status = empty_status();
    // SAFETY: reading an initialized constant of the MPI binding.
    let mut message = unsafe { sys::RSMPI_MESSAGE_NULL };
    // SAFETY: both out-pointers are valid locals.
    let rc = unsafe { sys::MPI_Mprobe(source, tag, c, &mut message, &mut status) };
    check(rc, "MPI_Mprobe")?;
    Ok(Matched { message, status })
}

/// `MPI_Improbe`: a matched message if one is there.
pub fn improbe(source: c_int, tag: c_int, c: Comm) -> Result<Option<Matched>> {
    let mut status = empty_status();
    // SAFETY: reading an initialized constant of the MPI binding.
    let mut message = unsafe { sys::RSMPI_MESSAGE_NULL };
    let mut flag = 0;
    // SAFETY: every out-pointer is a valid local.
    let rc = unsafe { sys::MPI_Improbe(source, tag, c, &mut flag, &mut message, &mut status) };
    check(rc, "MPI_Improbe")?;
    Ok((flag != 0).then_some(Matched { message, status }))
}

/// `MPI_Mrecv` of a matched message of bytes: its bytes and status.
pub fn mrecv(m: Matched) -> Result<(Vec<u8>, Status)> {
    let Matched {
        mut message,
        status,
    } = m;
    let mut n: c_int = 0;
    // SAFETY: `status` is the probe's; `n` a valid out-pointer.
    let rc = unsafe { sys::MPI_Get_count(&status, bytes_type(), &mut n) };
    check(rc, "MPI_Get_count")?;
    let mut buf = vec![0u8; usize::try_from(n).unwrap_or(0)];
    let mut st = empty_status();
    // SAFETY: `buf` has room for the n bytes the probe reported; the
    // message handle is the probe's, received once.
    let rc = unsafe {
        sys::MPI_Mrecv(
            buf.as_mut_ptr() as *mut c_void,
            n,
            bytes_type(),
            &mut message,
            &mut st,
        )
    };
    check(rc, "MPI_Mrecv")?;
    Ok((buf, st))
}

/// The exchange's communicator keyval, created on first use with `delete`
/// as its delete callback and no copying (a duplicate of the user's
/// communicator gets an exchange of its own).
pub fn exchange_keyval(delete: DeleteFn) -> Result<c_int> {
    KEYVAL
        .get_or_init(|| {
            let mut k: c_int = 0;
            // SAFETY: the callbacks have MPI's signatures; k is a valid
            // out-pointer; no extra state is passed.
            let rc = unsafe {
                sys::MPI_Comm_create_keyval(
                    Some(no_copy),
                    Some(delete),
                    &mut k,
                    std::ptr::null_mut(),
                )
            };
            check(rc, "MPI_Comm_create_keyval").map(|()| k)
        })
        .clone()
}

static KEYVAL: OnceLock<std::result::Result<c_int, crate::error::Error>> = OnceLock::new();

/// Frees the exchange's keyval (at `MPI_Finalize`; MPI keeps it until the
/// last attribute of it is deleted).
pub fn free_exchange_keyval() {
    if let Some(Ok(k)) = KEYVAL.get() {
        // The attribute on MPI_COMM_WORLD, which MPI_Finalize does not
        // delete (Open MPI 5 leaks its record otherwise). MPI_COMM_SELF's
        // are being deleted by MPI_Finalize as this runs.
        let _ = delete_attr(comm_world(), *k);
        let mut k = *k;
        // SAFETY: k is the exchange's keyval, freed once, at finalize.
        unsafe { sys::MPI_Comm_free_keyval(&mut k) };
    }
}

/// `MPI_Comm_delete_attr_function`.
pub type DeleteFn = unsafe extern "C" fn(Comm, c_int, *mut c_void, *mut c_void) -> c_int;

/// The copy callback: the attribute is not copied (`MPI_COMM_NULL_COPY_FN`).
unsafe extern "C" fn no_copy(
    _old: Comm,
    _keyval: c_int,
    _extra: *mut c_void,
    _value_in: *mut c_void,
    _value_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    if !flag.is_null() {
        // SAFETY: MPI passes a valid pointer to the flag.
        unsafe { *flag = 0 };
    }
    0
}

/// The value of `keyval` on `c`, when set.
pub fn get_attr(c: Comm, keyval: c_int) -> Result<Option<usize>> {
    let mut value: *mut c_void = std::ptr::null_mut();
    let mut flag: c_int = 0;
    // SAFETY: both out-pointers are valid locals; MPI writes a
    // pointer-sized value through the `void *` it receives.
    let rc = unsafe {
        sys::MPI_Comm_get_attr(
            c,
            keyval,
            &mut value as *mut *mut c_void as *mut c_void,
            &mut flag,
        )
    };
    check(rc, "MPI_Comm_get_attr")?;
    Ok((flag != 0).then_some(value as usize))
}

/// Deletes `keyval`'s attribute from `c` when it has one (MPI calls the
/// keyval's delete callback).
pub fn delete_attr(c: Comm, keyval: c_int) -> Result<()> {
    if get_attr(c, keyval)?.is_none() {
        return Ok(());
    }
    // SAFETY: c and keyval are valid; the attribute exists.
    let rc = unsafe { sys::MPI_Comm_delete_attr(c, keyval) };
    check(rc, "MPI_Comm_delete_attr")
}

/// Sets `keyval` on `c` to `value`.
pub fn set_attr(c: Comm, keyval: c_int, value: usize) -> Result<()> {
    // SAFETY: the value is stored, not dereferenced, by MPI.
    let rc = unsafe { sys::MPI_Comm_set_attr(c, keyval, value as *mut c_void) };
    check(rc, "MPI_Comm_set_attr")
}
