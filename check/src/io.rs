//! MPI-IO (issue 30, item 3): a view's filetype is built of whole etypes,
//! and a data access's (count, datatype) is whole copies of the view's
//! etype (MPI-4.1 §14.3, §14.4), checked on this rank before MPI sees the
//! access; a read's buffer type has no overlapping entries. A view whose
//! etype is `MPI_BYTE` (the default view's) takes any data.

use crate::datatypes::{self, Where};
use crate::mpi::{self, Object};
use crate::record::{PACKED, UNKNOWN};
use crate::report;
use crate::sig::{describe, sig_of};
use crate::sys::*;
use crate::types::TypeArg;
use mpix_marshal::HashKind;
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::Mutex;

/// A data access reads or writes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Io {
    Read,
    Write,
}

/// A file's view as the checks need it: its etype's signature (hash and
/// basic elements) and description.
struct View {
    hash: u64,
    elements: u64,
    etype: String,
}

static VIEWS: Mutex<Option<HashMap<u64, View>>> = Mutex::new(None);

/// The view `MPI_File_set_view` is about to set: its etype's signature,
/// None when it takes any data (`MPI_BYTE`, or a type the library cannot
/// read).
fn view_of(etype: MPI_Datatype) -> Option<View> {
    let e = sig_of(1, etype);
    if mpi::bits(etype) == mpi::bits(mpi::byte()) || e.flags & (UNKNOWN | PACKED) != 0 {
        return None;
    }
    Some(View {
        hash: e.hash,
        elements: e.count,
        etype: describe(1, etype),
    })
}

/// `MPI_File_set_view`: its filetype checked to be whole etypes and
/// reported before MPI sees the call, which is made all the same (the
/// other ranks are in it); when MPI accepts it, the file's error handler
/// is called then. The view is kept for the file's accesses.
pub(crate) fn set_view(
    fh: MPI_File,
    etype: MPI_Datatype,
    filetype: MPI_Datatype,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    if !report::types_enabled() || crate::internal::active() {
        return pmpi();
    }
    let view = view_of(etype);
    let problem = view
        .as_ref()
        .and_then(|v| whole_etypes(v, 1, filetype, "the filetype"));
    if let Some(p) = &problem {
        let summary = "the view's filetype is not built of whole etypes";
        emit("MPI_File_set_view", fh, summary, p.clone());
    }
    let rc = pmpi();
    if rc != 0 {
        return rc;
    }
    let mut views = VIEWS.lock().unwrap_or_else(|e| e.into_inner());
    let views = views.get_or_insert_with(HashMap::new);
    match view {
        Some(v) => views.insert(mpi::bits(fh), v),
        None => views.remove(&mpi::bits(fh)),
    };
    match problem {
        Some(_) => raise(fh),
        None => rc,
    }
}

pub(crate) fn file_closed(fh: u64) {
    let mut views = VIEWS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(v) = views.as_mut() {
        v.remove(&fh);
    }
}

/// A data access of (count, datatype) on `fh`.
pub(crate) fn access(
    name: &str,
    fh: MPI_File,
    kind: Io,
    count: i64,
    datatype: MPI_Datatype,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    if !report::types_enabled() || crate::internal::active() {
        return pmpi();
    }
    let place = Where::Object(Object::File(fh));
    let arg = TypeArg {
        name: "datatype".into(),
        count,
        datatype,
    };
    if !datatypes::usable_at(name, place, &[arg]) {
        return pmpi();
    }
    if kind == Io::Read {
        if let Err(rc) = datatypes::written_buffer(name, place, count, datatype, "read") {
            return rc;
        }
    }
    let problem = {
        let views = VIEWS.lock().unwrap_or_else(|e| e.into_inner());
        views
            .as_ref()
            .and_then(|v| v.get(&mpi::bits(fh)))
            .and_then(|v| whole_etypes(v, count, datatype, "the data"))
    };
    match problem {
        None => pmpi(),
        Some(p) => match finding(name, fh, p) {
            0 => pmpi(),
            rc => rc,
        },
    }
}

/// What is wrong when (count, t) is not whole copies of the view's etype.
fn whole_etypes(v: &View, count: i64, t: MPI_Datatype, what: &str) -> Option<String> {
    let s = sig_of(count, t);
    if s.flags & (UNKNOWN | PACKED) != 0 || v.elements == 0 || s.count == 0 {
        return None;
    }
    let whole = s.count % v.elements == 0
        && s.hash
            == HashKind::DEFAULT
                .repeat((v.hash, v.elements as u128), (s.count / v.elements) as u128);
    (!whole).then(|| {
        format!(
            "{what}, {} ({} basic elements), is not whole copies of the view's etype, {} ({} each)",
            describe(count, t),
            s.count,
            v.etype,
            v.elements
        )
    })
}

/// Reports `problem` of `call` on the file and raises it there: the code
/// (0 with `MPIX_CHECK=warn`).
fn finding(call: &str, fh: MPI_File, problem: String) -> c_int {
    let summary = "the data's datatype does not fit the file's view";
    emit(call, fh, summary, problem);
    raise(fh)
}

fn emit(call: &str, fh: MPI_File, summary: &str, problem: String) {
    let place = Where::Object(Object::File(fh));
    let report = datatypes::place_report(call, place, "io", summary.to_string(), |_| vec![problem]);
    report.emit(mpi::world_rank_cached());
}

fn raise(fh: MPI_File) -> c_int {
    datatypes::raise(Where::Object(Object::File(fh)))
}
