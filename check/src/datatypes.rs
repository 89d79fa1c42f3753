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
use crate::site::{self, Frames};
use crate::sys::*;
use crate::types::{self, TypeArg};
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

/// Where a call is made, for its report and error handler: a
/// communicator, or a window or file.
#[derive(Clone, Copy)]
pub(crate) enum Where {
    Comm(MPI_Comm),
    Object(mpi::Object),
}

/// The name reports give `place`, and this rank's rank and the size of
/// its group there.
pub(crate) fn place_names(place: Where) -> (String, usize, usize) {
    match place {
        Where::Comm(comm) => {
            let (rank, size) = mpi::rank_size(comm);
            (mpi::comm_name(comm, size), rank, size)
        }
        Where::Object(o) => match mpi::object_state(o) {
            Some(st) => (st.label.clone().unwrap_or_default(), st.rank, st.size),
            None => ("an object the checker did not see made".to_string(), 0, 0),
        },
    }
}

/// After a finding's report: the checker's datatype error raised on
/// `place` (its error handler called), and its code; 0 with
/// `MPIX_CHECK=warn`, where the call goes on.
pub(crate) fn raise(place: Where) -> c_int {
    if report::config().mode == Mode::Warn {
        return 0;
    }
    let code = mpi::datatype_error_code();
    match place {
        Where::Comm(comm) => mpi::raise_code(comm, None, code),
        Where::Object(o) => mpi::raise_code(mpi::comm_null(), Some(o), code),
    }
}

/// The report of a finding of this rank at `place`: `lines` gives its
/// lines from this rank's name ("rank 1"), and the call site follows.
pub(crate) fn place_report(
    call: &str,
    place: Where,
    kind: &'static str,
    summary: String,
    lines: impl FnOnce(&str) -> Vec<String>,
) -> Report {
    let (label, rank, size) = place_names(place);
    let me = format!("rank {rank}");
    let mut details = lines(&me);
    details.push(site::site_line(&me, call, &site::call_site()));
    Report {
        call: call.to_string(),
        comm: label,
        seq: 0,
        rank,
        size,
        kind,
        summary,
        details,
        fields: vec![],
    }
}

/// Checks the buffer (count, t) that `call` receives into on `comm`:
/// Err(the code the user's error handler was given) when it overlaps.
pub fn receive_buffer(
    call: &'static str,
    comm: MPI_Comm,
    count: i64,
    t: MPI_Datatype,
) -> Result<(), c_int> {
    written_buffer(call, Where::Comm(comm), count, t, "receive")
}

/// Whether the buffer (`count`, `t`) needs no look for overlapping
/// entries: nothing written, the look off, or the type known clean at
/// that count (`ANY_COUNT`: at every count).
fn known_clean(count: i64, t: MPI_Datatype) -> bool {
    (count <= 0 && count != ANY_COUNT)
        || !report::types_enabled()
        || crate::internal::active()
        || is_clean(mpi::bits(t), count, frees().0)
}

/// Whether `t` is clean at every count: known so, or predefined (a
/// predefined type's entries never overlap), then remembered so.
fn clean_at_any_count(t: MPI_Datatype) -> bool {
    known_clean(ANY_COUNT, t) || predefined_remembered(t)
}

/// Whether `t` is predefined, then remembered clean at every count.
fn predefined_remembered(t: MPI_Datatype) -> bool {
    if mpix_marshal::predefined_code(t).is_none() {
        return false;
    }
    remember_clean(mpi::bits(t), ANY_COUNT, frees().0);
    true
}

/// As `receive_buffer`, for any buffer MPI writes through the type at
/// `place` (`what`: "receive", or a one-sided or I/O call's "origin",
/// "target", "result", "read").
pub(crate) fn written_buffer(
    call: &str,
    place: Where,
    count: i64,
    t: MPI_Datatype,
    what: &str,
) -> Result<(), c_int> {
    // (A type known clean at every count is known clean at `count`.)
    if known_clean(count, t) || predefined_remembered(t) {
        return Ok(());
    }
    let (key, before) = (mpi::bits(t), frees());
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
    overlap_report(call, place, (count, t), &found, what).emit(mpi::world_rank_cached());
    match raise(place) {
        0 => Ok(()),
        rc => Err(rc),
    }
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
    // The common case without a question to MPI: the buffer's type clean
    // at any count (a predefined one, once seen).
    match call.receive_type() {
        None => return Ok(()),
        Some(t) if clean_at_any_count(t) => return Ok(()),
        Some(_) => {}
    }
    if !mpi::is_intracomm(call.comm) {
        return Ok(());
    }
    let (rank, size) = mpi::rank_size(call.comm);
    match call.receive_buffer(rank as i64, size as i64) {
        // (Known clean first: the call's name is made only for a look.)
        Some((count, t)) if !known_clean(count, t) => {
            written_buffer(&call.name(), Where::Comm(call.comm), count, t, "receive")
        }
        _ => Ok(()),
    }
}

/// The count a type clean at every count is remembered with.
const ANY_COUNT: i64 = -1;

fn is_clean(key: u64, count: i64, epoch: u64) -> bool {
    CLEAN.with(|c| {
        let c = c.borrow();
        c.0 == epoch
            && c.1
                .iter()
                .any(|&(k, n)| k == key && (n == count || n == ANY_COUNT))
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

/// The report of a receive into (count, t) (a write into it, for
/// `what` other than "receive"), whose entries overlap as `o` says.
fn overlap_report(
    call: &str,
    place: Where,
    (count, t): (i64, MPI_Datatype),
    o: &mpix_marshal::Overlap,
    what: &str,
) -> Report {
    let summary = format!(
        "the {what} buffer's datatype has overlapping entries (a {} it is erroneous)",
        match what {
            "receive" => "receive into",
            _ => "write through",
        }
    );
    let mut r = place_report(call, place, "datatype-overlap", summary, |me| {
        let buffer = describe(count, t);
        let mut lines = vec![match what {
            "receive" => format!("{me} receives into (count, datatype) = {buffer}"),
            _ => format!("{me}'s {what} buffer is (count, datatype) = {buffer}"),
        }];
        lines.extend(overlap_lines(count, o));
        lines
    });
    r.fields.push(("byte", o.byte.to_string()));
    if let Some([a, b]) = &o.entries {
        r.fields.push(("first_element", a.index.to_string()));
        r.fields.push(("second_element", b.index.to_string()));
    }
    r
}

/// The two elements that share a byte, with their places in the type.
fn overlap_lines(count: i64, o: &mpix_marshal::Overlap) -> Vec<String> {
    let Some([a, b]) = &o.entries else {
        return vec![format!(
            "two of its elements hold its byte {} (the typemap is too long to name them)",
            o.byte
        )];
    };
    let mut lines = vec![format!(
        "elements {} and {} of the buffer both hold its byte {}:",
        a.index, b.index, o.byte
    )];
    for e in [a, b] {
        let path = if count > 1 {
            count_path(&with_copy(e), count, true)
        } else {
            count_path(&e.path, 1, false)
        };
        lines.push(format!(
            "  element {}: {} ({} at byte {})",
            e.index, path, e.basic, e.displacement
        ));
    }
    lines
}

/// An entry's path as inside a contiguous type of the count, the terms
/// `count_path` reads for a count above 1.
fn with_copy(e: &mpix_marshal::OverlapEntry) -> String {
    match e.path.strip_prefix("root ") {
        Some(inner) => format!("root MPI_COMBINER_CONTIGUOUS copy {} > {inner}", e.copy),
        None => e.path.clone(),
    }
}

// ---- Unusable datatype arguments (issue 30, item 1) ----

/// One argument of a type constructor, as its check reads it (the
/// wrappers build these: `entry::type_shape`).
pub(crate) enum Arg {
    /// A count or block length, by its parameter's name.
    Count(&'static str, i64),
    /// An array of them (the entries the count says MPI reads).
    Counts(&'static str, Vec<i64>),
    /// An old type.
    Old(&'static str, MPI_Datatype),
    Olds(&'static str, Vec<MPI_Datatype>),
}

/// What a datatype argument may be at the call that takes it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    /// Communication, I/O, RMA: a committed, live type.
    Data,
    /// A constructor's old type, `MPI_Type_commit`, `MPI_Type_free`: live.
    Handle,
}

/// A type constructor: its arguments checked (a report names each that
/// MPI must refuse; the call is made anyway, and MPI's own error
/// follows), then the call, and the new handle told to the registry.
pub(crate) fn constructor(
    name: &'static str,
    args: &[Arg],
    newtype: *mut MPI_Datatype,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    if !report::types_enabled() {
        return pmpi();
    }
    let own = crate::internal::active();
    if !own {
        let problems: Vec<String> = args.iter().flat_map(arg_problems).collect();
        if !problems.is_empty() {
            let summary = "a type constructor is given an argument it must refuse";
            let place = Where::Comm(mpi::comm_world());
            argument_report(name, place, summary, problems).emit(mpi::world_rank_cached());
        }
    }
    let rc = pmpi();
    if rc == 0 && !newtype.is_null() {
        // SAFETY: MPI wrote the new handle.
        let t = unsafe { *newtype };
        // A duplicate is committed when its old type is (MPI-4.1 §5.1.10).
        let committed = name == "MPI_Type_dup" && args.iter().all(old_is_committed);
        let site = if own {
            Frames::default()
        } else {
            Frames::capture()
        };
        types::made(mpi::bits(t), name, site, committed, own);
    }
    rc
}

fn old_is_committed(a: &Arg) -> bool {
    match a {
        Arg::Old(_, t) => !matches!(types::state(mpi::bits(*t)), types::State::Uncommitted(_)),
        _ => true,
    }
}

/// What is wrong with one constructor argument, one line each.
fn arg_problems(a: &Arg) -> Vec<String> {
    let negative = |n: &str, v: i64| format!("{n} = {v}: it may not be negative");
    match a {
        Arg::Count(n, v) if *v < 0 => vec![negative(n, *v)],
        Arg::Counts(n, vs) => vs
            .iter()
            .position(|v| *v < 0)
            .map(|i| negative(&format!("{n}[{i}]"), vs[i]))
            .into_iter()
            .collect(),
        Arg::Old(n, t) => type_problem(n, 1, *t, Use::Handle)
            .map(|p| p.text)
            .into_iter()
            .collect(),
        Arg::Olds(n, ts) => ts
            .iter()
            .enumerate()
            .filter_map(|(i, t)| type_problem(&format!("{n}[{i}]"), 1, *t, Use::Handle))
            .map(|p| p.text)
            .collect(),
        _ => vec![],
    }
}

/// What is wrong with a datatype argument, and whether the checker may
/// still read the type (an uncommitted type: yes; a freed handle or
/// MPI_DATATYPE_NULL: no).
struct Problem {
    text: String,
    readable: bool,
}

/// What is wrong with the datatype argument `name` of (count, t), if
/// anything the checker can tell: MPI_DATATYPE_NULL (where the count
/// makes MPI read it), a freed handle, an uncommitted type (for data).
fn type_problem(name: &str, count: i64, t: MPI_Datatype, use_: Use) -> Option<Problem> {
    let bits = mpi::bits(t);
    if bits == null_bits() {
        return (count > 0).then(|| Problem {
            text: format!("{name} is MPI_DATATYPE_NULL"),
            readable: false,
        });
    }
    match types::state(bits) {
        types::State::Freed(f) => {
            let built = match &f.made {
                Some((by, site)) => format!(" (built by {by} {})", place(site)),
                None => String::new(),
            };
            let text = format!(
                "{name} is a freed datatype: MPI_Type_free was called on it {}{built}",
                place(&f.site)
            );
            Some(Problem {
                text,
                readable: false,
            })
        }
        types::State::Uncommitted(m) if use_ == Use::Data => Some(Problem {
            text: format!(
                "{name} was never committed: built by {} {}, it needs MPI_Type_commit before it describes data",
                m.by,
                place(&m.site)
            ),
            readable: true,
        }),
        _ => None,
    }
}

/// "from main at a.c:12", from a site `Frames` captured; for a type the
/// marshalling library made (its site not traced), that.
fn place(site: &Frames) -> String {
    if site.is_empty() {
        return "inside the marshalling library (an MPIX_ call made it)".to_string();
    }
    let s = site.site();
    match s.split_once('\t') {
        Some((_, at)) => format!("from {at}"),
        None => format!("from {s}"),
    }
}

/// Checks the datatype arguments of a communication call `call` on
/// `comm`, reporting each that MPI must refuse (then MPI's own error
/// follows); false when the checker may not read one (a freed handle,
/// MPI_DATATYPE_NULL): the caller then makes the call without its other
/// checks. A correct call costs an atomic load while no type is freed or
/// uncommitted, else a look-up in this thread's handles found usable.
pub(crate) fn usable(call: &str, comm: MPI_Comm, args: &[TypeArg]) -> bool {
    usable_at(call, Where::Comm(comm), args)
}

/// `usable` for a call at `place` (a window's or file's).
pub(crate) fn usable_at(call: &str, place: Where, args: &[TypeArg]) -> bool {
    if !report::types_enabled() || crate::internal::active() {
        return true;
    }
    let null = null_bits();
    let quiet = types::quiet();
    let fine = |a: &TypeArg| {
        let bits = mpi::bits(a.datatype);
        (a.count <= 0 || bits != null) && (quiet || bits == null || known_usable(bits))
    };
    if args.iter().all(fine) {
        return true;
    }
    let mut problems = Vec::new();
    for a in args {
        match type_problem(&a.name, a.count, a.datatype, Use::Data) {
            Some(p) => problems.push(p),
            None => remember_usable(mpi::bits(a.datatype)),
        }
    }
    if problems.is_empty() {
        return true;
    }
    let readable = problems.iter().all(|p| p.readable);
    let texts = problems.into_iter().map(|p| p.text).collect();
    let summary = "a datatype argument is not a committed datatype";
    argument_report(call, place, summary, texts).emit(mpi::world_rank_cached());
    readable
}

fn null_bits() -> u64 {
    static NULL: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *NULL.get_or_init(|| mpi::bits(mpi::datatype_null()))
}

thread_local! {
    /// Handles this thread found usable, valid while the registry is
    /// unchanged (`types::epoch`).
    static USABLE: RefCell<(u64, Vec<u64>)> = const { RefCell::new((0, Vec::new())) };
}

fn known_usable(bits: u64) -> bool {
    USABLE.with(|u| {
        let u = u.borrow();
        u.0 == types::epoch() && u.1.contains(&bits)
    })
}

/// Whether `t` is predefined (then usable: never freed, never
/// uncommitted), then remembered usable.
fn predefined_usable(t: MPI_Datatype) -> bool {
    if mpix_marshal::predefined_code(t).is_none() {
        return false;
    }
    remember_usable(mpi::bits(t));
    true
}

fn remember_usable(bits: u64) {
    let epoch = types::epoch();
    USABLE.with(|u| {
        let mut u = u.borrow_mut();
        if u.0 != epoch {
            *u = (epoch, Vec::new());
        }
        if u.1.len() == RECENT {
            u.1.remove(0);
        }
        u.1.push(bits);
    });
}

/// `usable` for a collective call: its arguments that MPI reads on this
/// rank (`Call::type_arguments`).
pub(crate) fn collective_usable(call: &Call) -> bool {
    if !report::types_enabled()
        || call.object.is_some()
        || mpi::bits(call.comm) == mpi::bits(mpi::comm_null())
    {
        return true;
    }
    // The common case first: two usable scalar types (insignificant ones
    // included), without asking which ones MPI reads.
    let (null, quiet) = (null_bits(), types::quiet());
    let fine = |t: MPI_Datatype| {
        let bits = mpi::bits(t);
        bits != null && (quiet || known_usable(bits) || predefined_usable(t))
    };
    let arrays = !call.stypes.is_none() || !call.rtypes.is_none();
    if !arrays && fine(call.stype) && fine(call.rtype) {
        return true;
    }
    if !mpi::is_intracomm(call.comm) {
        return true;
    }
    let (rank, size) = mpi::rank_size(call.comm);
    usable(&call.name(), call.comm, &call.type_arguments(rank, size))
}

/// `MPI_Type_commit` and `MPI_Type_free`: the handle must be live.
pub(crate) fn handle_usable(call: &str, t: MPI_Datatype) -> bool {
    if !report::types_enabled() || crate::internal::active() {
        return true;
    }
    let Some(problem) = type_problem("datatype", 1, t, Use::Handle).map(|p| p.text) else {
        return true;
    };
    let summary = "the datatype is not a live derived datatype";
    let place = Where::Comm(mpi::comm_world());
    argument_report(call, place, summary, vec![problem]).emit(mpi::world_rank_cached());
    false
}

/// The report of the unusable arguments `problems` of `call`.
fn argument_report(call: &str, place: Where, summary: &str, problems: Vec<String>) -> Report {
    let kind = "datatype-argument";
    let mut r = place_report(call, place, kind, summary.to_string(), |_| problems);
    r.details.push("the MPI's own error follows".to_string());
    r
}

// ---- Datatypes never freed (issue 30, item 4) ----

/// At `MPI_Finalize`: the derived types this rank made and never freed,
/// grouped by construction (their marshalled bytes), each group with its
/// tree, its size and where its first was built. Not with
/// `MPIX_CHECK_LEAKS=0`.
pub(crate) fn leaks_at_finalize() {
    if !report::leaks_enabled() || crate::internal::active() {
        return;
    }
    let leaked = types::leaked();
    if leaked.is_empty() {
        return;
    }
    let groups = crate::internal::within(|| leak_groups(&leaked));
    let total = leaked.len();
    let (rank, size) = mpi::rank_size(mpi::comm_world());
    let mut details = Vec::new();
    for g in &groups {
        let like = if g.count == 1 {
            "1 like this".to_string()
        } else {
            format!("{} like this", g.count)
        };
        details.push(format!(
            "{like}, the first built by {} {}:",
            g.by,
            place(&g.site)
        ));
        details.extend(g.tree.lines().map(str::to_string));
    }
    let kinds = if groups.len() == 1 {
        "1 construction".to_string()
    } else {
        format!("{} constructions", groups.len())
    };
    Report {
        call: "MPI_Finalize".to_string(),
        comm: mpi::comm_name(mpi::comm_world(), size),
        seq: 0,
        rank,
        size,
        kind: "datatype-leak",
        summary: format!(
            "{total} derived datatype{} made on this rank {} never freed ({kinds}; MPIX_CHECK_LEAKS=0 turns this list off)",
            if total == 1 { "" } else { "s" },
            if total == 1 { "was" } else { "were" }
        ),
        details,
        fields: vec![("leaked", total.to_string())],
    }
    .emit(mpi::world_rank_cached());
}

/// Leaked types of one construction.
struct LeakGroup {
    count: usize,
    by: &'static str,
    site: Frames,
    /// Its tree, as `mpix-marshal dump` outlines it.
    tree: String,
}

/// The leaked types by construction, in the order of their first's
/// handle; a type the library cannot read is a group of its own.
fn leak_groups(leaked: &[(u64, types::Made)]) -> Vec<LeakGroup> {
    let mut groups: Vec<(Vec<u8>, LeakGroup)> = Vec::new();
    for (bits, m) in leaked {
        let t: MPI_Datatype = mpi::from_bits(*bits);
        let (key, tree) = match mpix_marshal::type_tree(t) {
            Ok(node) => {
                let key = mpix_marshal::write(mpix_marshal::Representation::External, &node)
                    .unwrap_or_else(|_| bits.to_le_bytes().to_vec());
                (key, mpix_marshal::describe::outline(&node, "  "))
            }
            Err(e) => (
                bits.to_le_bytes().to_vec(),
                format!("  (its tree cannot be read: {e})"),
            ),
        };
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.count += 1,
            None => groups.push((
                key,
                LeakGroup {
                    count: 1,
                    by: m.by,
                    site: m.site.clone(),
                    tree,
                },
            )),
        }
    }
    groups.into_iter().map(|(_, g)| g).collect()
}
