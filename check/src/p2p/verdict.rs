//! The comparison of a receive with its message's companion, and the
//! report of a mismatch.

use super::channels::{is_quiet, world_of, Channel, Rec};
use super::companions::{Companion, LEN, NO_REFERENCE, PREDEFINED};
use super::counts::count_consumed;
use crate::mpi;
use crate::record::{PACKED, UNKNOWN};
use crate::report::{self, Mode, Report};
use crate::sys::*;
use mpix_marshal::HashKind;
use std::ffi::{c_int, c_void};

/// Receives the companion from (source, tag) on `ch`, counted as
/// consumed. The sender posted it before its message (received or
/// probed by now): this returns without waiting for the sender's program.
/// In the batched mode it is taken from the inbox (None if its batch has
/// not come: see `arrived`).
pub(super) fn recv_companion(ch: &mut Channel, source: c_int, tag: c_int) -> Option<Companion> {
    if let Some(b) = ch.batches.as_mut() {
        let c = b.take(source, tag)?;
        count_consumed(world_of(ch, source));
        return Some(Companion::decode(&c));
    }
    let mut buf = [0u8; LEN];
    // SAFETY: buf holds LEN bytes.
    let rc = unsafe {
        PMPI_Recv(
            buf.as_mut_ptr() as *mut c_void,
            LEN as c_int,
            mpi::byte(),
            source,
            tag,
            ch.dup,
            RSMPI_STATUS_IGNORE,
        )
    };
    if rc != 0 {
        return None;
    }
    count_consumed(world_of(ch, source));
    Some(Companion::decode(&buf))
}

/// Whether the companion of the next message from (source, tag) is here
/// (immediate mode: has arrived on the channel; batched: its batch has,
/// and any batch that has arrived is taken in first).
pub(super) fn arrived(ch: &mut Channel, source: c_int, tag: c_int) -> bool {
    let dup = ch.dup;
    match ch.batches.as_mut() {
        Some(b) => b.has(source, tag) || (b.poll(dup) && b.has(source, tag)),
        None => probe(source, tag, dup),
    }
}

/// The (source, tag) of a companion that has arrived, if any.
pub(super) fn any_arrived(ch: &mut Channel) -> Option<(c_int, c_int)> {
    let dup = ch.dup;
    if let Some(b) = ch.batches.as_mut() {
        b.poll(dup);
        return b.first();
    }
    // SAFETY: read mpi-sys's copies of the wildcards.
    let (any_source, any_tag) = unsafe { (RSMPI_ANY_SOURCE, RSMPI_ANY_TAG) };
    let mut flag = 0;
    // SAFETY: MPI_Status is plain data.
    let mut st: MPI_Status = unsafe { std::mem::zeroed() };
    // SAFETY: probes the checker's own duplicate.
    let rc = unsafe { PMPI_Iprobe(any_source, any_tag, dup, &mut flag, &mut st) };
    (rc == 0 && flag != 0).then_some((st.MPI_SOURCE, st.MPI_TAG))
}

fn probe(source: c_int, tag: c_int, dup: MPI_Comm) -> bool {
    let mut flag = 0;
    // SAFETY: probes the checker's own duplicate.
    let rc = unsafe { PMPI_Iprobe(source, tag, dup, &mut flag, RSMPI_STATUS_IGNORE) };
    rc == 0 && flag != 0
}

/// Takes the companion of receive `r`'s message from (source, tag) and
/// compares.
pub(super) fn check_one(ch: &mut Channel, r: &Rec, source: c_int, tag: c_int) -> Result<(), c_int> {
    let Some(c) = recv_companion(ch, source, tag) else {
        return Ok(());
    };
    let why = match compare(&c, r) {
        Compared::Fine => {
            settle(&c, source, ch.dup);
            return Ok(());
        }
        Compared::Differ(why) => why,
    };
    let sender_type = SenderType::of(&c, source, ch.dup);
    report(ch, r, source, tag, &c, sender_type.get(), why)
}

/// Counts a companion's reference as received without using it (the
/// exchange counts every counted reference once, resolved or not).
fn settle(c: &Companion, source: c_int, dup: MPI_Comm) {
    if c.counted() {
        let _ =
            crate::internal::within(|| mpix_marshal::consume_reference(&c.reference, source, dup));
    }
}

/// The sender's type of a companion, for a report: a predefined one by
/// its code (a table look-up), a derived one lent by the exchange (given
/// back on drop). Using it counts the reference as received, unless an
/// earlier companion of its batch carried the count (`REPEAT`).
pub(super) struct SenderType {
    t: Option<MPI_Datatype>,
    lent: bool,
}

impl SenderType {
    pub(super) fn of(c: &Companion, source: c_int, dup: MPI_Comm) -> SenderType {
        if c.flags & PREDEFINED != 0 {
            let code = u16::from_le_bytes([c.reference[0], c.reference[1]]);
            let t = mpix_marshal::predefined_datatype(mpix_marshal::Predefined(code));
            return SenderType { t, lent: false };
        }
        if c.flags & NO_REFERENCE != 0 {
            return SenderType {
                t: None,
                lent: false,
            };
        }
        let t = crate::internal::within(|| {
            if c.counted() {
                mpix_marshal::resolve_type(&c.reference, source, dup)
            } else {
                mpix_marshal::resolve_type_uncounted(&c.reference, source, dup)
            }
        })
        .ok();
        SenderType { t, lent: true }
    }

    pub(super) fn get(&self) -> Option<MPI_Datatype> {
        self.t
    }
}

impl Drop for SenderType {
    fn drop(&mut self) {
        if let (Some(t), true) = (self.t, self.lent) {
            let _ = crate::internal::within(|| mpix_marshal::release_type(t));
        }
    }
}

pub(super) enum Compared {
    Fine,
    Differ(&'static str),
}

/// Gropp's rule: the sender's signature against the first `elements`
/// basic elements of the receive's.
pub(super) fn compare(c: &Companion, r: &Rec) -> Compared {
    if (c.flags | r.sig.flags) & UNKNOWN != 0 || (c.flags | r.sig.flags) & PACKED != 0 {
        return Compared::Fine;
    }
    if c.elements > r.sig.count {
        return Compared::Differ("the message has more basic elements than the receive takes");
    }
    if c.elements == r.sig.count {
        return if c.hash == r.sig.hash {
            Compared::Fine
        } else {
            Compared::Differ("the type signatures do not match")
        };
    }
    // A prefix: the receive's tree, unless its derived type was freed since.
    if !r.readable() {
        return Compared::Fine;
    }
    let Ok(count) = u128::try_from(r.count) else {
        return Compared::Fine;
    };
    match mpix_marshal::signature_prefix_summary(
        r.datatype,
        count,
        c.elements as u128,
        HashKind::DEFAULT,
    ) {
        Ok(s) if s.packed || s.hash == c.hash => Compared::Fine,
        Ok(_) => Compared::Differ(
            "the type signature of the message does not match the start of the receive's",
        ),
        Err(_) => Compared::Fine,
    }
}

/// This rank's and the sender's names in a report: by rank in the
/// communicator (by group on an intercommunicator), with the world rank
/// where it differs.
pub(super) fn names(ch: &Channel, source: c_int) -> (String, String) {
    let with_world = |name: String, rank: usize, world: i32| {
        if world >= 0 && world as usize != rank {
            format!("{name} (world rank {world})")
        } else {
            name
        }
    };
    let (local, remote) = if ch.inter {
        ("local group rank", "remote group rank")
    } else {
        ("rank", "rank")
    };
    (
        with_world(
            format!("{local} {}", ch.rank),
            ch.rank,
            mpi::world_rank_cached(),
        ),
        with_world(
            format!("{remote} {source}"),
            source.max(0) as usize,
            world_of(ch, source),
        ),
    )
}

pub(super) fn report(
    ch: &Channel,
    r: &Rec,
    source: c_int,
    tag: c_int,
    c: &Companion,
    sender_type: Option<MPI_Datatype>,
    why: &'static str,
) -> Result<(), c_int> {
    let (me, them) = names(ch, source);
    let readable = r.readable();
    let el = |n: u64| if n == 1 { "element" } else { "elements" };
    let mut details = vec![match sender_type {
        Some(t) => format!(
            "{them} sends (count, datatype) = {}: {} {}",
            crate::sig::describe(c.count, t),
            c.elements,
            el(c.elements)
        ),
        None => format!("{them} sends {} {}", c.elements, el(c.elements)),
    }];
    details.push(if readable {
        format!(
            "{me} receives (count, datatype) = {}: at most {} {}",
            crate::sig::describe(r.count, r.datatype),
            r.sig.count,
            el(r.sig.count)
        )
    } else {
        format!("{me} receives at most {} {}", r.sig.count, el(r.sig.count))
    });
    let mut fields = vec![
        ("source", source.to_string()),
        ("tag", tag.to_string()),
        ("sent_elements", c.elements.to_string()),
        ("receive_elements", r.sig.count.to_string()),
    ];
    if let (Some(t), true) = (sender_type, readable) {
        let (lines, f) =
            crate::sig::difference_lines((&them, c.count, t), (&me, r.count, r.datatype));
        details.extend(lines);
        fields.extend(f);
    }
    // Where the receive's check ran (the sender's call site is not known
    // here: the companion does not carry it).
    let site = match r.site {
        (name, ra) if ra != 0 => crate::site::caller_site(name, ra),
        _ => crate::site::call_site(),
    };
    details.push(crate::site::site_line(&me, r.call, &site));
    let rep = Report {
        call: r.call.to_string(),
        comm: if ch.inter {
            mpi::inter_name(ch.comm)
        } else {
            mpi::comm_name(ch.comm, ch.size)
        },
        seq: r.id,
        rank: ch.rank,
        size: ch.size,
        kind: "p2p-signature",
        summary: format!("{why}: the message from {them} with tag {tag}"),
        details,
        fields,
    };
    rep.emit(mpi::world_rank_cached());
    if report::config().mode == Mode::Warn || is_quiet() {
        return Ok(());
    }
    Err(mpi::raise_code(ch.comm, None, mpi::p2p_error_code()))
}
