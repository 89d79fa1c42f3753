//! The datatypes the program made (issue 30): which handles are live,
//! committed or freed, and where each was built. Pure state: the
//! constructor wrappers and `MPI_Type_commit`/`MPI_Type_free` tell it,
//! the checks of datatype arguments (`crate::datatypes`) ask it, and the
//! leak list at `MPI_Finalize` reads it.
//!
//! A handle is known only from the calls the checker sees; one it never
//! saw made is `Unknown` (predefined types, types the MPI made inside
//! other calls) and is never reported. A handle may be given out more
//! than once (`MPI_Type_get_contents` returns the handle it was built
//! from in MPICH and Open MPI, with a reference more): it is live until
//! freed as many times.

use crate::site::Frames;
use crate::sys::MPI_Datatype;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// A datatype argument of a communication call: its parameter's name
/// (`"recvtype"`, `"sendtypes[2]"`), count and handle.
pub struct TypeArg {
    /// (Borrowed for the fixed names: no allocation on every call.)
    pub name: std::borrow::Cow<'static, str>,
    pub count: i64,
    pub datatype: MPI_Datatype,
}

/// A live handle.
#[derive(Clone, Debug)]
pub struct Made {
    /// The call that made it (`MPI_Type_vector`, …).
    pub by: &'static str,
    pub site: Frames,
    pub committed: bool,
    /// Made by the marshalling library or the checker (their caches, the
    /// exchange's lent handles): never listed as leaked.
    pub own: bool,
    /// How many times MPI gave the handle out, less the frees.
    refs: u32,
    /// The order of the makings.
    seq: u64,
}

/// A freed handle, until MPI gives it out again.
#[derive(Clone, Debug)]
pub struct Freed {
    pub site: Frames,
    /// The call that made it and where, when the checker saw it.
    pub made: Option<(&'static str, Frames)>,
}

/// What the registry knows of a handle.
#[derive(Clone, Debug)]
pub enum State {
    /// Never seen made (predefined, or made inside another MPI call).
    Unknown,
    Committed,
    Uncommitted(Made),
    Freed(Freed),
}

#[derive(Default)]
struct Registry {
    live: HashMap<u64, Made>,
    freed: HashMap<u64, Freed>,
    uncommitted: usize,
    made: u64,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

/// The live uncommitted handles plus the freed ones: while none, no
/// handle can be reported, and a check is one atomic load.
static SUSPECTS: AtomicUsize = AtomicUsize::new(0);

/// Bumped by every change: what a thread learned of a handle holds while
/// it is unchanged (`crate::datatypes` keeps the handles it found usable).
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// Changes the registry.
fn with<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    let mut g = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    let r = g.get_or_insert_with(Registry::default);
    let out = f(r);
    SUSPECTS.store(r.uncommitted + r.freed.len(), Ordering::Release);
    EPOCH.fetch_add(1, Ordering::AcqRel);
    out
}

/// Reads the registry.
fn read<R>(f: impl FnOnce(&Registry) -> R) -> R {
    let mut g = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(Registry::default))
}

/// Whether no handle the checker saw is uncommitted or freed.
pub fn quiet() -> bool {
    SUSPECTS.load(Ordering::Acquire) == 0
}

/// The registry's version (see `EPOCH`).
pub fn epoch() -> u64 {
    EPOCH.load(Ordering::Acquire)
}

/// A constructor made handle `bits` (a new object: a handle MPI still
/// had live would be a free the checker missed, so the entry is new).
pub fn made(bits: u64, by: &'static str, site: Frames, committed: bool, own: bool) {
    with(|r| r.insert(bits, by, site, committed, own));
}

/// `MPI_Type_get_contents` returned handle `bits` to the program: a
/// reference more to a live handle, else a new one (its committed state
/// is not defined; taken as committed, as it is never reported).
pub fn returned(bits: u64, by: &'static str, site: Frames) {
    with(|r| match r.live.get_mut(&bits) {
        Some(m) => m.refs += 1,
        None => r.insert(bits, by, site, true, false),
    });
}

impl Registry {
    fn insert(&mut self, bits: u64, by: &'static str, site: Frames, committed: bool, own: bool) {
        self.freed.remove(&bits);
        if let Some(old) = self.live.remove(&bits) {
            self.uncommitted -= usize::from(!old.committed);
        }
        self.uncommitted += usize::from(!committed);
        self.made += 1;
        let m = Made {
            by,
            site,
            committed,
            own,
            refs: 1,
            seq: self.made,
        };
        self.live.insert(bits, m);
    }
}

/// MPI gave out handle `bits` as a type that is not the program's to free
/// (`MPI_Type_create_f90_real`, `MPI_Type_match_size`): no longer freed.
pub fn given(bits: u64) {
    with(|r| {
        r.freed.remove(&bits);
    });
}

pub fn committed(bits: u64) {
    with(|r| {
        if let Some(m) = r.live.get_mut(&bits) {
            if !m.committed {
                m.committed = true;
                r.uncommitted -= 1;
            }
        }
    });
}

/// The program (or, `own`, the library) freed handle `bits` at `site`.
/// The library's frees of handles it did not make are of references it
/// was given (`MPI_Type_get_contents`), which the registry never counted;
/// a handle never seen made is not recorded (MPI may give it out again
/// where the checker does not see it).
pub fn freed(bits: u64, site: Frames, own: bool) {
    with(|r| {
        let Some(m) = r.live.get_mut(&bits) else {
            return;
        };
        if own && !m.own {
            return;
        }
        if m.refs > 1 {
            m.refs -= 1;
            return;
        }
        let Some(m) = r.live.remove(&bits) else {
            return;
        };
        r.uncommitted -= usize::from(!m.committed);
        if !own {
            let made = Some((m.by, m.site));
            r.freed.insert(bits, Freed { site, made });
        }
    });
}

/// What the registry knows of `bits` (a site copied only for a handle a
/// check reports).
pub fn state(bits: u64) -> State {
    read(|r| match (r.live.get(&bits), r.freed.get(&bits)) {
        (Some(m), _) if m.committed => State::Committed,
        (Some(m), _) => State::Uncommitted(m.clone()),
        (None, Some(f)) => State::Freed(f.clone()),
        (None, None) => State::Unknown,
    })
}

/// The live handles the program made and has not freed (the library's
/// own excluded), each with what made it, in the order they were made.
pub fn leaked() -> Vec<(u64, Made)> {
    read(|r| {
        let mut out: Vec<(u64, Made)> = r
            .live
            .iter()
            .filter(|(_, m)| !m.own)
            .map(|(b, m)| (*b, m.clone()))
            .collect();
        out.sort_by_key(|(_, m)| m.seq);
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test: the registry is process-wide.
    #[test]
    fn handles_live_committed_freed_and_given_again() {
        let f = Frames::default;
        made(1, "MPI_Type_vector", f(), false, false);
        assert!(!quiet());
        assert!(matches!(state(1), State::Uncommitted(ref m) if m.by == "MPI_Type_vector"));
        committed(1);
        assert!(quiet());
        // A second reference (MPI_Type_get_contents): two frees.
        returned(1, "MPI_Type_get_contents", f());
        freed(1, f(), false);
        assert!(matches!(state(1), State::Committed));
        freed(1, f(), false);
        assert!(
            matches!(state(1), State::Freed(ref x) if x.made.as_ref().unwrap().0 == "MPI_Type_vector")
        );
        // The handle given out again is live.
        made(1, "MPI_Type_contiguous", f(), true, false);
        assert!(matches!(state(1), State::Committed));
        assert_eq!(leaked().len(), 1);
        // The library's frees of references it was given count nothing.
        freed(1, f(), true);
        assert!(matches!(state(1), State::Committed));
        // Its own types are never leaked, and its frees of them count.
        made(2, "MPI_Type_dup", f(), true, true);
        assert_eq!(leaked().len(), 1);
        // (a free of the library's own leaves no freed handle behind)
        freed(2, f(), true);
        assert!(matches!(state(2), State::Unknown));
        // A handle never seen made is not recorded as freed.
        freed(4, f(), false);
        assert!(matches!(state(4), State::Unknown));
        assert!(matches!(state(3), State::Unknown));
        freed(1, f(), false);
        assert!(!quiet() && leaked().is_empty());
        given(1);
        assert!(quiet() && matches!(state(1), State::Unknown));
    }
}
