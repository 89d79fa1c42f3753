//! One-sided communication (issue 30, item 3): what an RMA call's
//! datatypes must satisfy, all of it known at the origin (it names the
//! target's type too, and every rank's window size is learned when the
//! window is made), checked before MPI sees the call.
//!
//! MPI-4.1 §12.3: a put is as if the origin sent (origin_count,
//! origin_datatype) and the target received into (target_count,
//! target_datatype): the signatures match by the point-to-point rule
//! (the data fits without truncation), and the target type has no
//! overlapping entries; a get is the same the other way round. An
//! accumulate's types are each built from one predefined type, the same
//! on both sides (§12.3.4). The target buffer lies inside the target's
//! window.

use crate::datatypes::{self, Where};
use crate::mpi::{self, Object};
use crate::record::{PACKED, UNKNOWN};
use crate::report;
use crate::sig::{difference_lines, sig_of};
use crate::sys::*;
use crate::types::TypeArg;
use std::collections::{BTreeSet, HashMap};
use std::ffi::c_int;
use std::sync::Mutex;

/// The one-sided operations, by what moves where.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rma {
    Put,
    Get,
    Accumulate,
    GetAccumulate,
    FetchAndOp,
    CompareAndSwap,
}

/// One RMA call's arguments, as its checks read them.
pub(crate) struct Access {
    kind: Rma,
    origin: (i64, MPI_Datatype),
    target_rank: c_int,
    target_disp: i64,
    target: (i64, MPI_Datatype),
    result: Option<(i64, MPI_Datatype)>,
    op: Option<MPI_Op>,
}

impl Access {
    pub(crate) fn new(
        kind: Rma,
        origin: (i64, MPI_Datatype),
        target_rank: c_int,
        target_disp: MPI_Aint,
        target: (i64, MPI_Datatype),
        result: Option<(i64, MPI_Datatype)>,
        op: Option<MPI_Op>,
    ) -> Access {
        Access {
            kind,
            origin,
            target_rank,
            // (MPI_Aint is i64 or isize, by the bindings.)
            #[allow(clippy::unnecessary_cast)]
            target_disp: target_disp as i64,
            target,
            result,
            op,
        }
    }

    /// Its datatype arguments by name.
    fn type_args(&self) -> Vec<TypeArg> {
        let arg = |name: &'static str, (count, datatype): (i64, MPI_Datatype)| TypeArg {
            name: name.into(),
            count,
            datatype,
        };
        match self.kind {
            Rma::FetchAndOp | Rma::CompareAndSwap => vec![arg("datatype", self.target)],
            _ => {
                let mut out = vec![
                    arg("origin_datatype", self.origin),
                    arg("target_datatype", self.target),
                ];
                out.extend(self.result.map(|r| arg("result_datatype", r)));
                out
            }
        }
    }
}

/// Every window's (size in bytes, displacement unit) by rank, learned
/// when it was made (`window_made`); none for a dynamic window.
static WINDOWS: Mutex<Option<Windows>> = Mutex::new(None);

/// Window handle bits → each rank's (size, disp_unit).
type Windows = HashMap<u64, Vec<(i64, i64)>>;

/// A window was made with this rank's `size` and `disp_unit` (None: a
/// dynamic window): every rank's, gathered on the checker's duplicate of
/// its communicator while all are in the call.
pub(crate) fn window_made(win: MPI_Win, local: Option<(MPI_Aint, c_int)>) {
    let Some((size, unit)) = local else { return };
    let Some(dup) = mpi::object_state(Object::Win(win)).map(|s| s.dup) else {
        return;
    };
    #[allow(clippy::unnecessary_cast)] // MPI_Aint is i64 or isize, by the bindings
    let mine = (size as i64, i64::from(unit));
    let all = crate::internal::within(|| mpi::allgather_pair(dup, mine));
    if let Some(all) = all {
        let mut w = WINDOWS.lock().unwrap_or_else(|e| e.into_inner());
        w.get_or_insert_with(HashMap::new)
            .insert(mpi::bits(win), all);
    }
}

pub(crate) fn window_freed(win: u64) {
    let mut w = WINDOWS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(w) = w.as_mut() {
        w.remove(&win);
    }
}

fn window_of(win: MPI_Win, rank: c_int) -> Option<(i64, i64)> {
    let w = WINDOWS.lock().unwrap_or_else(|e| e.into_inner());
    w.as_ref()?
        .get(&mpi::bits(win))?
        .get(usize::try_from(rank).ok()?)
        .copied()
}

/// An RMA call: its datatype arguments checked (`datatypes::usable`),
/// then its signatures, types and target range; a finding is reported and
/// raised on the window (the operation is not made, as for an invalid
/// argument; with `MPIX_CHECK=warn` it is).
pub(crate) fn access(name: &str, win: MPI_Win, a: Access, pmpi: impl FnOnce() -> c_int) -> c_int {
    if !report::types_enabled() || crate::internal::active() || a.target_rank == mpi::proc_null() {
        return pmpi();
    }
    let place = Where::Object(Object::Win(win));
    if !datatypes::usable_at(name, place, &a.type_args()) {
        return pmpi();
    }
    let mut problems = signature_problems(&a);
    problems.extend(accumulate_problems(&a));
    problems.extend(range_problem(win, &a));
    if let Some((count, t, what)) = written_buffer(&a) {
        if let Err(rc) = datatypes::written_buffer(name, place, count, t, what) {
            return rc;
        }
    }
    if problems.is_empty() {
        return pmpi();
    }
    let summary = "the one-sided operation's datatypes are erroneous".to_string();
    let report = datatypes::place_report(name, place, "rma", summary, |me| {
        let target = format!(
            "{me} targets rank {} at displacement {}",
            a.target_rank, a.target_disp
        );
        std::iter::once(target).chain(problems).collect()
    });
    report.emit(mpi::world_rank_cached());
    match datatypes::raise(place) {
        0 => pmpi(),
        rc => rc,
    }
}

/// The buffer MPI writes with the type's entries (a get's origin, a put's
/// or an accumulate's target, a fetch's result), which may not overlap.
fn written_buffer(a: &Access) -> Option<(i64, MPI_Datatype, &'static str)> {
    match a.kind {
        Rma::Get => Some((a.origin.0, a.origin.1, "origin")),
        Rma::Put | Rma::Accumulate => Some((a.target.0, a.target.1, "target")),
        Rma::GetAccumulate => a.result.map(|(c, t)| (c, t, "result")),
        _ => None,
    }
}

/// One side of a transfer: its name in reports, (count, datatype).
type Side<'a> = (&'a str, (i64, MPI_Datatype));

/// The sending and receiving sides by the point-to-point rule.
fn signature_problems(a: &Access) -> Vec<String> {
    let no_op = a.op.is_some_and(|op| mpi::op_name(op) == Some("MPI_NO_OP"));
    let pairs: Vec<(Side, Side)> = match a.kind {
        Rma::Put | Rma::Accumulate => vec![(("the origin", a.origin), ("the target", a.target))],
        Rma::Get => vec![(("the target", a.target), ("the origin", a.origin))],
        Rma::GetAccumulate => {
            let mut v = vec![];
            if !no_op {
                v.push((("the origin", a.origin), ("the target", a.target)));
            }
            if let Some(r) = a.result {
                v.push((("the target", a.target), ("the result", r)));
            }
            v
        }
        Rma::FetchAndOp | Rma::CompareAndSwap => vec![],
    };
    let mut out = Vec::new();
    for ((sn, s), (rn, r)) in pairs {
        if let Some(why) = fits(s, r) {
            out.push(format!(
                "{sn} ({}) and {rn} ({}): {why}",
                crate::sig::describe(s.0, s.1),
                crate::sig::describe(r.0, r.1)
            ));
            let (lines, _) = difference_lines((sn, s.0, s.1), (rn, r.0, r.1));
            out.extend(lines.into_iter().map(|l| format!("  {l}")));
        }
    }
    out
}

/// Whether (count, t) sent fits (count, t) received by Gropp's rule: the
/// sent signature equal to the start of the received one. None: it fits.
fn fits(sent: (i64, MPI_Datatype), received: (i64, MPI_Datatype)) -> Option<&'static str> {
    let (s, r) = (sig_of(sent.0, sent.1), sig_of(received.0, received.1));
    if (s.flags | r.flags) & (UNKNOWN | PACKED) != 0 {
        return None;
    }
    if s.count > r.count {
        return Some("the data has more basic elements than the buffer it goes to takes");
    }
    if s.count == r.count {
        return (s.hash != r.hash).then_some("the type signatures do not match");
    }
    let count = u128::try_from(received.0).ok()?;
    let kind = mpix_marshal::HashKind::DEFAULT;
    match mpix_marshal::signature_prefix_summary(received.1, count, s.count as u128, kind) {
        Ok(p) if !p.packed && p.hash != s.hash => {
            Some("the type signature of the data does not match the start of the buffer's")
        }
        _ => None,
    }
}

/// An accumulate's types: each built from one predefined type, the same
/// on both sides (and the result's); a fetch-and-op's or
/// compare-and-swap's type predefined.
fn accumulate_problems(a: &Access) -> Vec<String> {
    let replace =
        a.op.and_then(mpi::op_name)
            .is_some_and(|n| n == "MPI_REPLACE" || n == "MPI_NO_OP");
    match a.kind {
        Rma::Put | Rma::Get => vec![],
        Rma::FetchAndOp | Rma::CompareAndSwap => match mpix_marshal::predefined_code(a.target.1) {
            Some(_) => vec![],
            None => vec!["datatype must be a predefined datatype (one element moves)".to_string()],
        },
        Rma::Accumulate | Rma::GetAccumulate => {
            let mut sides = vec![
                ("origin_datatype", a.origin.1),
                ("target_datatype", a.target.1),
            ];
            if let Some(r) = a.result {
                sides.push(("result_datatype", r.1));
            }
            let basics: Vec<(&str, BTreeSet<String>)> =
                sides.iter().map(|(n, t)| (*n, basic_types(*t))).collect();
            let mut out = Vec::new();
            for (n, b) in &basics {
                if b.len() > 1 {
                    let list: Vec<&str> = b.iter().map(String::as_str).collect();
                    out.push(format!(
                        "{n} mixes basic types ({}): an accumulate's types are each built from one predefined type",
                        list.join(", ")
                    ));
                }
            }
            let firsts: BTreeSet<&String> =
                basics.iter().filter_map(|(_, b)| b.iter().next()).collect();
            if out.is_empty() && firsts.len() > 1 && !replace {
                let named: Vec<String> = basics
                    .iter()
                    .map(|(n, b)| format!("{n} of {}", b.iter().next().map_or("?", |s| s.as_str())))
                    .collect();
                out.push(format!(
                    "the types are built from different predefined types ({}): an accumulate needs the same one on both sides",
                    named.join(", ")
                ));
            }
            out
        }
    }
}

/// The predefined types a type is built from, by name (empty when the
/// library cannot read it: nothing is reported then).
fn basic_types(t: MPI_Datatype) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if let Ok(node) = crate::internal::within(|| mpix_marshal::type_tree(t)) {
        collect_basic(&node, &mut out);
    }
    out
}

fn collect_basic(node: &mpix_marshal::Node, out: &mut BTreeSet<String>) {
    match &node.kind {
        mpix_marshal::Kind::Named(p) if !p.is_marker() => {
            out.insert(p.mpi_name().to_string());
        }
        _ => node.children().iter().for_each(|c| collect_basic(c, out)),
    }
}

/// The target buffer's bytes against the target's window.
fn range_problem(win: MPI_Win, a: &Access) -> Option<String> {
    let (size, unit) = window_of(win, a.target_rank)?;
    let (count, t) = a.target;
    if count <= 0 {
        return None;
    }
    let (true_lb, true_extent, extent) = mpi::type_bounds(t)?;
    let copies = (count - 1).saturating_mul(extent);
    let start = a.target_disp.saturating_mul(unit);
    let lo = start.saturating_add(true_lb).saturating_add(copies.min(0));
    let hi = start
        .saturating_add(true_lb)
        .saturating_add(true_extent)
        .saturating_add(copies.max(0));
    (lo < 0 || hi > size).then(|| {
        format!(
            "the target buffer, bytes {lo} to {hi} of rank {}'s window (target_disp {} x disp_unit {unit}, {}), lies outside the window's {size} bytes",
            a.target_rank,
            a.target_disp,
            crate::sig::describe(count, t)
        )
    })
}
