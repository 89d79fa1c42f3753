//! Owned datatype handles: a handle together with whether the library must
//! free it, freed on drop, so that no path (an error returned half-way
//! through a build, a level abandoned for the tree path) has to remember
//! which handles to release. `Handles` is a stack of them laid out as the
//! C array of raw handles that constructors take their old types from.

use super::{free, is_initialized, Datatype};
use crate::error::Result;

/// A datatype handle and its ownership. An owned handle is a derived type
/// the library made, or a reference MPI handed it (get_contents' derived
/// children): it is freed when dropped. A borrowed one (a predefined or
/// F90 type, MPI_DATATYPE_NULL, a handle the caller keeps) never is, and
/// dropping it costs one test.
#[must_use = "dropping an owned handle frees it"]
#[derive(Debug)]
pub struct OwnedDatatype {
    raw: Datatype,
    owned: bool,
}

impl OwnedDatatype {
    /// A handle that is not the library's to free.
    #[inline]
    pub fn borrowed(raw: Datatype) -> OwnedDatatype {
        OwnedDatatype { raw, owned: false }
    }

    /// Takes ownership of a derived handle: dropping the result frees it.
    ///
    /// # Safety
    /// `raw` is a live derived datatype that nothing else frees (the
    /// library made it, or MPI handed it a new reference to it). Freeing
    /// anything else is erroneous in MPI, and with Open MPI's pointer
    /// handles frees memory that another handle still points to.
    #[inline]
    pub unsafe fn from_raw(raw: Datatype) -> OwnedDatatype {
        OwnedDatatype { raw, owned: true }
    }

    /// The raw handle, still owned by `self`.
    #[inline]
    pub fn get(&self) -> Datatype {
        self.raw
    }

    /// Whether dropping `self` frees the handle.
    #[inline]
    pub fn is_owned(&self) -> bool {
        self.owned
    }

    /// The raw handle, handed over: the caller frees it (when owned).
    #[inline]
    pub fn into_raw(self) -> Datatype {
        let raw = self.raw;
        std::mem::forget(self);
        raw
    }

    /// Frees an owned handle now and reports MPI's answer, for the paths
    /// that report a failed free rather than ignore it. A borrowed handle
    /// is left alone.
    pub fn free(self) -> Result<()> {
        let (raw, owned) = (self.raw, self.owned);
        std::mem::forget(self);
        if owned {
            free(raw)
        } else {
            Ok(())
        }
    }
}

impl Drop for OwnedDatatype {
    #[inline]
    fn drop(&mut self) {
        if self.owned {
            release(self.raw);
        }
    }
}

/// Frees an owned handle being dropped: a failure cannot be reported from
/// a drop, and after MPI_Finalize MPI may not be called (its handles went
/// with it).
fn release(t: Datatype) {
    if is_initialized() {
        let _ = free(t);
    }
}

/// A stack of handles, owned or borrowed, whose raw handles are one
/// contiguous array: a run of it is a constructor's old types as they
/// are (a struct's members), with no copy. Truncating or dropping it
/// frees the owned handles it drops; kept in a buffer that lives across
/// calls, it allocates nothing once grown.
#[derive(Default, Debug)]
pub struct Handles {
    raw: Vec<Datatype>,
    owned: Vec<bool>,
}

impl Handles {
    #[inline]
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// The raw handles, bottom first (still owned by the stack).
    #[inline]
    pub fn raw(&self) -> &[Datatype] {
        &self.raw
    }

    /// Pushes `h`; the stack owns it from here.
    #[inline]
    pub fn push(&mut self, h: OwnedDatatype) {
        self.raw.push(h.raw);
        self.owned.push(h.owned);
        std::mem::forget(h);
    }

    /// The top handle, handed back with its ownership.
    #[inline]
    pub fn pop(&mut self) -> Option<OwnedDatatype> {
        let raw = self.raw.pop()?;
        // One flag per handle: the default is never used.
        let owned = self.owned.pop().unwrap_or(false);
        Some(OwnedDatatype { raw, owned })
    }

    /// Puts `h` at `i` in place of the handle there, which is dropped.
    pub fn replace(&mut self, i: usize, h: OwnedDatatype) {
        let old = OwnedDatatype {
            raw: std::mem::replace(&mut self.raw[i], h.raw),
            owned: std::mem::replace(&mut self.owned[i], h.owned),
        };
        std::mem::forget(h);
        drop(old);
    }

    /// Drops the handles above the first `len`, freeing the owned ones.
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        if len >= self.raw.len() {
            return;
        }
        release_owned(&self.raw[len..], &self.owned[len..]);
        self.raw.truncate(len);
        self.owned.truncate(len);
    }

    /// Drops every handle, freeing the owned ones (the buffers are kept).
    #[inline]
    pub fn clear(&mut self) {
        self.truncate(0);
    }
}

/// Frees the owned ones of `raw` (`owned` says which). Out of line, so
/// that the hot loops that truncate a stack stay small.
#[inline(never)]
fn release_owned(raw: &[Datatype], owned: &[bool]) {
    for (&t, &owned) in raw.iter().zip(owned) {
        if owned {
            release(t);
        }
    }
}

impl Drop for Handles {
    fn drop(&mut self) {
        self.clear();
    }
}
