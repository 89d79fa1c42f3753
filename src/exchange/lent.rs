//! The committed handles a receiver's cache holds, and lends to callers
//! of `resolve` until they release them. A handle lives while its entry
//! is cached or while it is lent: an entry the sender evicts is dropped
//! from the cache, but its handle is freed only when its last borrower
//! releases it, so a borrower never holds a freed handle.

use crate::error::{Error, Result};
use crate::mpi::{self, Datatype};
use rustc_hash::FxHashMap as HashMap;
use std::sync::{Mutex, MutexGuard};

struct Lent {
    borrows: usize,
    cached: bool,
}

/// Derived handles by their bits (predefined ones are never adopted: they
/// are neither freed nor counted).
static LENT: Mutex<Option<HashMap<u64, Lent>>> = Mutex::new(None);

fn table() -> MutexGuard<'static, Option<HashMap<u64, Lent>>> {
    LENT.lock().unwrap_or_else(|p| p.into_inner())
}

/// Commits a handle the cache made and keeps it: it is the cache's until
/// `uncache`. A predefined type is returned as it is.
pub fn adopt(mut t: Datatype) -> Result<Datatype> {
    if mpi::is_derived(t) {
        if let Err(e) = mpi::commit(&mut t) {
            let _ = mpi::free(t);
            return Err(e);
        }
        table().get_or_insert_with(HashMap::default).insert(
            mpi::handle_bits(t),
            Lent {
                borrows: 0,
                cached: true,
            },
        );
    }
    Ok(t)
}

/// Lends `t` (an adopted handle, or a predefined one) to a caller.
pub fn lend(t: Datatype) -> Datatype {
    if let Some(l) = table()
        .as_mut()
        .and_then(|m| m.get_mut(&mpi::handle_bits(t)))
    {
        l.borrows += 1;
    }
    t
}

/// The cache drops `t`: freed now unless a caller still holds it.
pub fn uncache(t: Datatype) {
    let bits = mpi::handle_bits(t);
    let free = {
        let mut table = table();
        let Some(map) = table.as_mut() else { return };
        match map.get_mut(&bits) {
            Some(l) if l.borrows > 0 => {
                l.cached = false;
                false
            }
            Some(_) => {
                map.remove(&bits);
                true
            }
            None => false,
        }
    };
    if free {
        let _ = mpi::free(t);
    }
}

/// A caller gives back a handle `resolve` lent it.
pub fn release(t: Datatype) -> Result<()> {
    let bits = mpi::handle_bits(t);
    let free = {
        let mut table = table();
        match table.as_mut().and_then(|m| m.get_mut(&bits)) {
            Some(l) if l.borrows > 0 => {
                l.borrows -= 1;
                let last = l.borrows == 0 && !l.cached;
                if last {
                    table.as_mut().map(|m| m.remove(&bits));
                }
                last
            }
            _ if !mpi::is_derived(t) => return Ok(()),
            _ => {
                return Err(Error::invalid(
                    "the datatype was not lent by MPIX_Type_resolve, or was released already",
                ))
            }
        }
    };
    if free {
        mpi::free(t)?;
    }
    Ok(())
}

/// At MPI_Finalize: every handle still held is freed (a borrower's
/// handle ends with MPI).
pub fn free_all() {
    let all = table().take();
    for bits in all.into_iter().flatten().map(|(b, _)| b) {
        let _ = mpi::free(mpi::handle_from_bits(bits));
    }
}

/// How many handles the cache holds or lends (for tests).
pub fn held() -> usize {
    table().as_ref().map_or(0, |m| m.len())
}
