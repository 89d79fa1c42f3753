//! The marshal traversal: an MPI datatype, walked with `MPI_Type_get_envelope` /
//! `MPI_Type_get_contents` (their `_c` forms on MPI-4), written straight
//! into the external stream in pre-order. It builds no tree on the way:
//! marshalling sits on communication paths, so the only work besides the
//! MPI calls is moving their results into the output (the owned tree is
//! `external::read` of this stream). Every derived handle get_contents
//! returns is freed here, on every path; predefined and F90 handles never
//! are.

use crate::error::{Error, Result};
use crate::format::codes::{Combiner, Distribution, Order, Predefined, DFLT_DARG, UNDEFINED};
use crate::format::external::{
    self, Encoding, FLAG_ATTRS, FLAG_BOUNDS, FLAG_CORRECTION, FLAG_LARGE, FLAG_NAME, FLAG_WIDE,
};
use crate::format::sink::Sink;
use crate::format::tree::{records_bounds, MAX_DEPTH, MAX_NAME_LEN};
use crate::format::writer::{self, beyond_i32, put_values};
use crate::mpi::{self, Contents, Datatype, Local, MPI_Aint, MPI_Count};
use crate::scratch::with_buffer;
use crate::signature::Default64;
use attributes::Registry;
use cache::{Head, Held, Plan};
use std::ffi::CStr;
use std::os::raw::c_int;

pub mod attributes;
pub mod cache;
mod signature;
mod stream;

pub use stream::{build_id, tree, with_stream};

/// Appends the external stream of `datatype` to `out`. On error `out` may
/// hold a partial stream; the handle itself is never freed.
/// `header` starts the stream; `enc` is the node grammar's encoding. With
/// `hash_at`, the default signature hash of the type is written big-endian
/// over the header's 8 bytes at that offset. With `seal`, the stream's
/// checksum follows it (external version 5).
pub fn write_stream(
    datatype: Datatype,
    out: &mut Sink,
    header: &[u8],
    hash_at: Option<usize>,
    enc: Encoding,
    typerep: &'static CStr,
    seal: bool,
) -> Result<()> {
    let local = mpi::local();
    let start = out.len();
    if let Some(p) = local.predefined(datatype) {
        let mut stream = [0u8; PREDEFINED_MAX];
        let n = predefined(p, header, hash_at, enc, &mut stream)?;
        out.put(&stream[..n]);
        if seal {
            external::seal(out, start);
        }
        return Ok(());
    }
    with_buffer(&SCRATCH, |scratch| {
        out.put(header);
        scratch.sigs.clear();
        let mut d = Writer {
            start,
            recording: false,
            enc,
            local,
            scratch,
            out,
            keyvals: attributes::snapshot(),
            typerep,
            hashing: hash_at.is_some(),
        };
        let patch_hash = |d: &mut Writer| {
            if let (Some(at), Some(sig)) = (hash_at, d.scratch.sigs.pop()) {
                d.out.patch(start + at, &external::version_and_hash(sig.h));
            }
        };
        // Open MPI's get_contents returns fresh duplicates, which carry the
        // inner names of the moment: kept ones would go stale, so on Open
        // MPI only a type with no derived level below its root (nothing
        // kept) has a plan; the others are traversed every time.
        let cached = cache::entry(datatype)?;
        if let Some(plan) = cached.as_ref().and_then(|e| e.plan(enc)) {
            let same = d.replay(plan, header.len())?;
            if let Some(at) = hash_at {
                // The recorded stream's header holds the hash.
                d.out.patch(start + at, &plan.bytes[at..at + 8]);
            }
            match plan.crc {
                // The recorded bytes again: their checksum too.
                Some(crc) if seal && same => d.out.put(&crc.to_be_bytes()),
                _ if seal => external::seal(d.out, start),
                _ => {}
            }
            return Ok(());
        }
        d.recording = true;
        d.scratch.heads.clear();
        d.scratch.kept.clear();
        let walked = d.node(datatype, 0);
        let nested_open_mpi = d.local.constants.is_open_mpi != 0 && d.scratch.heads.len() > 1;
        if walked.is_err() || d.out.len() - start > CACHE_AT_MOST || nested_open_mpi {
            // Not cached: the inner handles kept for the plan go back now.
            for h in d.scratch.kept.drain(..) {
                let _ = mpi::free(h.get());
            }
            return walked.map(|_| {
                patch_hash(&mut d);
                if seal {
                    external::seal(d.out, start);
                }
            });
        }
        patch_hash(&mut d);
        let crc = seal.then(|| external::checksum(&d.out.bytes()[start..]));
        debug_assert_eq!(
            d.scratch.kept.len(),
            d.scratch.heads.iter().filter(|h| h.depth() > 0).count(),
            "the plan frees exactly the handles it kept"
        );
        d.scratch.kept.clear();
        let plan = Plan {
            bytes: d.out.bytes()[start..].into(),
            heads: d.scratch.heads.as_slice().into(),
            crc,
        };
        if let Some(crc) = crc {
            d.out.put(&crc.to_be_bytes());
        }
        // Failing to cache costs only speed: the stream is already written.
        let _ = cache::store(datatype, cached, enc, plan);
        Ok(())
    })
}

/// What can differ between two internal marshals of `datatype` once its
/// internal plan is cached (each level's node word, name and attributes;
/// the rest of the stream is the plan's, fixed for the type's life),
/// written to a buffer that `f` reads with the type's cache entry. None
/// when the type has no cached internal plan (a predefined type, one not
/// marshalled yet, and on Open MPI a type with derived levels below its
/// root, which is traversed anew).
pub(crate) fn with_varying_parts<R>(
    datatype: Datatype,
    f: impl FnOnce(&[u8], &cache::Entry) -> Result<R>,
) -> Result<Option<R>> {
    let local = mpi::local();
    if local.predefined(datatype).is_some() {
        return Ok(None);
    }
    let Some(entry) = cache::entry(datatype)? else {
        return Ok(None);
    };
    let Some(plan) = entry.plan(Encoding::Native) else {
        return Ok(None);
    };
    with_buffer(&VARYING, |out| {
        with_buffer(&SCRATCH, |scratch| {
            out.clear();
            let mut d = Writer {
                start: 0,
                recording: false,
                enc: Encoding::Native,
                local,
                scratch,
                out,
                keyvals: attributes::snapshot(),
                typerep: crate::format::Representation::Internal.c_name(),
                hashing: false,
            };
            for h in plan.heads.iter() {
                d.put_head(h.handle.get(), h.word, h.depth(), h.only_child())?;
            }
            Ok(())
        })?;
        f(out.bytes(), entry).map(Some)
    })
}

thread_local! {
    static VARYING: std::cell::RefCell<Sink> = std::cell::RefCell::new(Sink::default());
}

/// The default signature value of a predefined type (cached per process).
#[inline]
pub(crate) fn named_signature(p: Predefined) -> Result<Default64> {
    signature::named(p)
}

/// The most bytes a predefined type's stream takes (the external one,
/// its checksum included).
pub const PREDEFINED_MAX: usize = external::HEADER_LEN + 4 + external::CHECKSUM_LEN;

/// The stream of the predefined type `p` into `out`, as `write_stream` writes it:
/// `header`, then its one node word, without the traversal's buffers (the
/// commonest marshal, whose floor is a single MPI call that this does not
/// even need). Returns its length; an external stream's checksum, which
/// `out` has room for, is the caller's.
pub fn predefined(
    p: Predefined,
    header: &[u8],
    hash_at: Option<usize>,
    enc: Encoding,
    out: &mut [u8; PREDEFINED_MAX],
) -> Result<usize> {
    let n = header.len() + 4;
    out[..header.len()].copy_from_slice(header);
    out[header.len()..n].copy_from_slice(&enc.word(external::named_word(p)));
    if let Some(at) = hash_at {
        let v = signature::named(p)?;
        out[at..at + 8].copy_from_slice(&external::version_and_hash(v.h));
    }
    Ok(n)
}

/// Streams longer than this are not cached on their type: their replay
/// would save little next to copying them, and the copy is kept per type.
const CACHE_AT_MOST: usize = 64 << 10;

/// Buffers reused across calls on one thread, so that a marshal makes no
/// allocation once warm.
#[derive(Default)]
struct Scratch {
    /// get_contents buffers, one per depth.
    pool: Vec<Contents>,
    /// The current node's integer fields, in stream order, as runs of
    /// get_contents' arrays (converted only when written).
    segs: Vec<Seg>,
    /// Which registered keyvals have a value on the current node.
    present: Vec<usize>,
    /// MPI_Type_get_name's buffer, zeroed once per thread rather than once
    /// per level (which showed in replays).
    name: NameBuf,
    /// When hashing: the signature values of the levels walked and not yet
    /// taken by their parent (a stack), and each depth's fields, kept for
    /// after its children (which reuse `segs`).
    sigs: Vec<Default64>,
    saved_segs: Vec<Vec<Seg>>,
    /// While recording a plan: its derived levels in pre-order, and the
    /// inner handles handed back so far (freed if the plan is not kept).
    heads: Vec<Head>,
    kept: Vec<Held>,
}

struct NameBuf(Box<[u8; 256]>);

impl Default for NameBuf {
    fn default() -> Self {
        NameBuf(Box::new([0; 256]))
    }
}

/// A run of a node's fields: one computed value, or `(start, len)` of
/// get_contents' ints, addrs or counts.
#[derive(Clone, Copy)]
enum Seg {
    One(i64),
    Ints(usize, usize),
    Addrs(usize, usize),
    Counts(usize, usize),
}

impl Seg {
    fn len(&self) -> usize {
        match *self {
            Seg::One(_) => 1,
            Seg::Ints(_, n) | Seg::Addrs(_, n) | Seg::Counts(_, n) => n,
        }
    }
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

struct Writer<'a> {
    /// Where this stream starts in `out`.
    start: usize,
    /// Whether a plan is being recorded for the type's cache (the first
    /// marshal), in `Scratch::heads` and `Scratch::kept`.
    recording: bool,
    enc: Encoding,
    local: &'static Local,
    scratch: &'a mut Scratch,
    out: &'a mut Sink,
    /// The registered keyvals, when there are any.
    keyvals: Option<Registry>,
    /// The representation's name, for attribute callbacks.
    typerep: &'static CStr,
    /// Whether the signature hash is computed (`Scratch::sigs`).
    hashing: bool,
}

impl Writer<'_> {
    /// Writes one node and its subtree; returns whether `t` is derived.
    fn node(&mut self, t: Datatype, depth: usize) -> Result<bool> {
        if depth >= MAX_DEPTH {
            return Err(Error::unsupported(format!(
                "the datatype is nested deeper than {MAX_DEPTH} levels, the format's limit"
            )));
        }
        // A predefined handle is known without asking MPI.
        if let Some(p) = self.local.predefined(t) {
            self.put_u32(external::named_word(p));
            if self.hashing {
                self.scratch.sigs.push(signature::named(p)?);
            }
            return Ok(false);
        }
        let env = mpi::envelope(t)?;
        let combiner = self.local.combiner(env.combiner).ok_or_else(|| {
            Error::unsupported(format!(
                "unknown combiner value {} from MPI_Type_get_envelope",
                env.combiner
            ))
        })?;
        if combiner == Combiner::Named {
            let name = mpi::get_name(t).ok().flatten().unwrap_or_default();
            return Err(Error::unsupported(format!(
                "the predefined datatype {} has no portable code",
                String::from_utf8_lossy(&name)
            )));
        }
        if self.scratch.pool.len() <= depth {
            self.scratch.pool.resize_with(depth + 1, Contents::default);
        }
        let mut c = std::mem::take(&mut self.scratch.pool[depth]);
        let mut freed = 0;
        let result = mpi::contents(t, &env, &mut c)
            .and_then(|()| self.derived(t, combiner, &c, depth, &mut freed));
        if result.is_err() {
            // Children not yet handed back are freed here.
            for &child in c.types.iter().skip(freed) {
                if mpi::is_derived(child) {
                    let _ = mpi::free(child);
                }
            }
        }
        c.types.clear();
        self.scratch.pool[depth] = c;
        result.map(|()| !combiner.is_predefined())
    }

    fn derived(
        &mut self,
        t: Datatype,
        combiner: Combiner,
        c: &Contents,
        depth: usize,
        freed: &mut usize,
    ) -> Result<()> {
        let large = !c.counts.is_empty();
        let nchildren = self.fields(combiner, c, large)?;
        if nchildren != c.types.len() {
            return Err(layout(combiner));
        }
        let mut word = combiner.code();
        // The bounds this MPI computed, where another MPI (or this one,
        // given other handles) could compute others (spec/external.md §5.6).
        if records_bounds(combiner) {
            let (lb, extent) = mpi::extent(t)?;
            self.scratch.segs.extend([Seg::One(lb), Seg::One(extent)]);
            word |= FLAG_BOUNDS;
        }
        if combiner == Combiner::Resized && cache::is_correction(t)? {
            word |= FLAG_CORRECTION;
        }
        // The node word, the name, the fields.
        let wide = self.any_wide(c);
        if wide {
            word |= FLAG_WIDE;
        }
        if large {
            word |= FLAG_LARGE;
        }
        let only_child = (c.types.len() == 1).then(|| c.types[0]);
        let head_at = self.out.len() - self.start;
        if combiner.is_predefined() {
            self.put_u32(word); // F90 types carry no name or attributes
        } else {
            self.put_head(t, word, depth, only_child)?;
            if self.recording {
                self.scratch.heads.push(Head::new(
                    t,
                    word,
                    depth,
                    only_child,
                    head_at,
                    self.out.len() - self.start,
                ));
            }
        }
        self.put_fields(c, wide);
        if self.hashing {
            let saved = &mut self.scratch.saved_segs;
            if saved.len() <= depth {
                saved.resize_with(depth + 1, Vec::new);
            }
            saved[depth].clear();
            saved[depth].extend_from_slice(&self.scratch.segs);
        }
        for (i, &child) in c.types.iter().enumerate() {
            let derived = self.node(child, depth + 1)?;
            if derived {
                if self.recording {
                    // The cached plan keeps the handle, to read its name
                    // and attributes when it replays.
                    self.scratch.kept.push(Held::new(child));
                } else {
                    mpi::free(child)?;
                }
            }
            *freed = i + 1;
        }
        if self.hashing {
            let sigs = &mut self.scratch.sigs;
            let first = sigs.len() - nchildren;
            let fields = signature::Fields {
                segs: &self.scratch.saved_segs[depth],
                c,
            };
            let value = signature::level(combiner, &fields, &mut sigs[first..])?;
            sigs.truncate(first);
            sigs.push(value);
        }
        Ok(())
    }

    /// A derived node's word (with NAME and ATTRS as they are now), name
    /// and attributes.
    fn put_head(
        &mut self,
        t: Datatype,
        mut word: u32,
        depth: usize,
        only_child: Option<Datatype>,
    ) -> Result<()> {
        let name_len = name_of(self.local, t, depth, &mut self.scratch.name.0, only_child)?;
        if name_len > 0 {
            word |= FLAG_NAME;
        }
        if let Some(reg) = &self.keyvals {
            attributes::present(reg, t, &mut self.scratch.present)?;
            if !self.scratch.present.is_empty() {
                word |= FLAG_ATTRS;
            }
        }
        self.put_u32(word);
        if name_len > 0 {
            writer::put_opaque(self.out, self.enc, &self.scratch.name.0[..name_len]);
        }
        if word & FLAG_ATTRS != 0 {
            self.put_attributes(t)?;
        }
        Ok(())
    }

    /// Writes a cached stream again, reading each level's name and
    /// attributes anew (the header is already written). Returns whether
    /// every level's head came out as recorded (then the whole stream did).
    fn replay(&mut self, plan: &Plan, header_len: usize) -> Result<bool> {
        let b = &plan.bytes;
        let first = plan.heads.first().map_or(b.len(), |h| h.head_at());
        self.out.put(&b[header_len..first]);
        let mut same = true;
        for (i, h) in plan.heads.iter().enumerate() {
            let at = self.out.len();
            self.put_head(h.handle.get(), h.word, h.depth(), h.only_child())?;
            same &= self.out.bytes()[at..] == b[h.head_at()..h.fields_at()];
            let end = plan.heads.get(i + 1).map_or(b.len(), |n| n.head_at());
            self.out.put(&b[h.fields_at()..end]);
        }
        Ok(same)
    }

    fn put_opaque(&mut self, bytes: &[u8]) {
        writer::put_opaque(self.out, self.enc, bytes);
    }

    /// The attribute block of `t` (spec/external.md §5.5): each present
    /// keyval's canonical name and the bytes its callback writes straight
    /// into the stream, in room its size callback asked for.
    fn put_attributes(&mut self, t: Datatype) -> Result<()> {
        let reg = self.keyvals.clone().expect("checked by the caller");
        let present = std::mem::take(&mut self.scratch.present);
        self.put_u32(present.len() as u32);
        let mut result = Ok(());
        for &i in &present {
            let k = &reg[i];
            self.put_opaque(k.name.as_bytes());
            result = attributes::value_size(k, self.typerep, t).and_then(|size| {
                writer::put_opaque_with(self.out, self.enc, size, |room| {
                    attributes::write_value(k, self.typerep, t, room)
                })
            });
            if result.is_err() {
                break;
            }
        }
        self.scratch.present = present;
        result
    }

    fn put_u32(&mut self, v: u32) {
        writer::put_u32(self.out, self.enc, v);
    }

    /// Writes the node's fields as XDR ints (or hypers when `wide`),
    /// converting straight from get_contents' arrays.
    fn put_fields(&mut self, c: &Contents, wide: bool) {
        let unit = if wide { 8 } else { 4 };
        let total: usize = self.scratch.segs.iter().map(|s| s.len()).sum();
        let mut dst = self.out.room(total * unit);
        for seg in &self.scratch.segs {
            let (head, rest) = std::mem::take(&mut dst).split_at_mut(seg.len() * unit);
            match *seg {
                Seg::One(v) => put_values(head, &[v], wide, self.enc),
                Seg::Ints(i, n) => put_values(head, &c.ints[i..i + n], wide, self.enc),
                Seg::Addrs(i, n) => put_values(head, &c.addrs[i..i + n], wide, self.enc),
                Seg::Counts(i, n) => put_values(head, &c.counts[i..i + n], wide, self.enc),
            }
            dst = rest;
        }
    }

    /// Whether any field needs 64 bits.
    fn any_wide(&self, c: &Contents) -> bool {
        self.scratch.segs.iter().any(|seg| match *seg {
            Seg::One(v) => i32::try_from(v).is_err(),
            Seg::Ints(..) => false,
            Seg::Addrs(i, n) => beyond_i32(&c.addrs[i..i + n]),
            Seg::Counts(i, n) => beyond_i32(&c.counts[i..i + n]),
        })
    }

    /// Puts the node's integer fields, in stream order (spec/external.md §6),
    /// into the scratch as segments; returns how many child types the combiner takes.
    fn fields(&mut self, combiner: Combiner, c: &Contents, large: bool) -> Result<usize> {
        let local: &'static Local = self.local;
        let l = &local.constants;
        let f = &mut self.scratch.segs;
        f.clear();
        let mut a = Args::new(&c.ints, &c.addrs, &c.counts, large);
        let children = match combiner {
            Combiner::Named => unreachable!("written by the caller"),
            Combiner::F90Real | Combiner::F90Complex => {
                f.push(Seg::One(undefined(a.int()?, l.undefined)));
                f.push(Seg::One(undefined(a.int()?, l.undefined)));
                0
            }
            Combiner::F90Integer => {
                f.push(Seg::One(undefined(a.int()?, l.undefined)));
                0
            }
            Combiner::Dup => 1,
            Combiner::Contiguous => {
                f.push(Seg::One(a.cnt()?));
                1
            }
            Combiner::Vector => {
                f.extend([Seg::One(a.cnt()?), Seg::One(a.cnt()?), Seg::One(a.cnt()?)]);
                1
            }
            Combiner::Hvector | Combiner::HvectorInteger => {
                f.extend([Seg::One(a.cnt()?), Seg::One(a.cnt()?), Seg::One(a.addr()?)]);
                1
            }
            Combiner::Indexed => {
                let n = a.len()?;
                f.push(Seg::One(n as i64));
                a.cnts(n, f)?;
                a.cnts(n, f)?;
                1
            }
            Combiner::Hindexed
            | Combiner::HindexedInteger
            | Combiner::Struct
            | Combiner::StructInteger => {
                let n = a.len()?;
                f.push(Seg::One(n as i64));
                a.cnts(n, f)?;
                a.addrs(n, f)?;
                if matches!(combiner, Combiner::Struct | Combiner::StructInteger) {
                    n
                } else {
                    1
                }
            }
            Combiner::IndexedBlock => {
                let n = a.len()?;
                f.extend([Seg::One(n as i64), Seg::One(a.cnt()?)]);
                a.cnts(n, f)?;
                1
            }
            Combiner::HindexedBlock => {
                let n = a.len()?;
                f.extend([Seg::One(n as i64), Seg::One(a.cnt()?)]);
                a.addrs(n, f)?;
                1
            }
            Combiner::Subarray => {
                let n = a.int_len()?;
                f.push(Seg::One(n as i64));
                a.cnts(3 * n, f)?;
                let order = order(l, a.int()?)?;
                f.push(Seg::One(order as i64));
                1
            }
            Combiner::Darray => {
                f.extend([Seg::One(a.int()?), Seg::One(a.int()?)]);
                let n = a.int_len()?;
                f.push(Seg::One(n as i64));
                a.cnts(n, f)?;
                for _ in 0..n {
                    let d = distribution(l, a.int()?)?;
                    f.push(Seg::One(d as i64));
                }
                for _ in 0..n {
                    let d = a.int()?;
                    f.push(Seg::One(if d == l.distribute_dflt_darg as i64 {
                        DFLT_DARG
                    } else {
                        d
                    }));
                }
                for _ in 0..n {
                    f.push(Seg::One(a.int()?));
                }
                let order = order(l, a.int()?)?;
                f.push(Seg::One(order as i64));
                1
            }
            Combiner::Resized => {
                f.extend([Seg::One(a.addr()?), Seg::One(a.addr()?)]);
                1
            }
            Combiner::ValueIndex => 2,
        };
        if !a.done() {
            return Err(layout(combiner));
        }
        Ok(children)
    }
}

/// The user-set name, into `buf`; its length (0: none).
fn name_of(
    local: &Local,
    t: Datatype,
    depth: usize,
    buf: &mut [u8; 256],
    only_child: Option<Datatype>,
) -> Result<usize> {
    let mut len = mpi::get_name_into(t, buf)?;
    if local.constants.is_open_mpi != 0 && buf[..len].starts_with(b"Dup ") {
        if depth > 0 {
            // Open MPI's get_contents returns a duplicate of each derived
            // argument, which it names "Dup <original name>".
            len = strip_dup(buf, len);
        }
        // Open MPI also names what MPI_Type_dup and MPI_Type_create_resized
        // make "Dup <old type's name>" by itself: not a user's name.
        if let (Some(child), true) = (only_child, buf[..len].starts_with(b"Dup ")) {
            let mut old = [0u8; 256];
            let mut old_len = mpi::get_name_into(child, &mut old)?;
            if local.predefined(child).is_none() && old[..old_len].starts_with(b"Dup ") {
                old_len = strip_dup(&mut old, old_len);
            }
            if buf[4..len] == old[..old_len] {
                len = 0;
            }
        }
        // And every type of size 0 (a zero count, or built from one) a
        // duplicate of its MPI_EMPTY; MPICH names them nothing.
        if &buf[..len] == b"Dup MPI_EMPTY" && mpi::geometry(t)?.size == 0 {
            len = 0;
        }
    }
    if len > MAX_NAME_LEN {
        return Err(Error::unsupported(format!(
            "a type name of {len} bytes is longer than the format's {MAX_NAME_LEN}"
        )));
    }
    Ok(len)
}

/// Removes a leading "Dup " from the name in `buf`; returns the new length.
fn strip_dup(buf: &mut [u8; 256], len: usize) -> usize {
    buf.copy_within(4..len, 0);
    len - 4
}

fn order(l: &mpi::Constants, local: i64) -> Result<Order> {
    match local {
        x if x == l.order_c as i64 => Ok(Order::C),
        x if x == l.order_fortran as i64 => Ok(Order::Fortran),
        x => Err(Error::unsupported(format!(
            "unknown array order {x} from MPI_Type_get_contents"
        ))),
    }
}

fn distribution(l: &mpi::Constants, local: i64) -> Result<Distribution> {
    match local {
        x if x == l.distribute_block as i64 => Ok(Distribution::Block),
        x if x == l.distribute_cyclic as i64 => Ok(Distribution::Cyclic),
        x if x == l.distribute_none as i64 => Ok(Distribution::None),
        x => Err(Error::unsupported(format!(
            "unknown distribution {x} from MPI_Type_get_contents"
        ))),
    }
}

fn undefined(v: i64, local_undefined: c_int) -> i64 {
    if v == local_undefined as i64 {
        UNDEFINED
    } else {
        v
    }
}

fn layout(c: Combiner) -> Error {
    Error::unsupported(format!(
        "MPI_Type_get_contents returned an unexpected layout for {}",
        c.mpi_name()
    ))
}

/// Reads a combiner's arguments from get_contents' arrays. Classic calls
/// put counts in `ints` and byte displacements in `addrs`; large-count
/// calls put both in `counts`, in argument order, and keep only true C ints
/// (ndims, order, distributions) in `ints`. The three cursors make one
/// description of each combiner serve both layouts.
struct Args<'a> {
    ints: &'a [c_int],
    addrs: &'a [MPI_Aint],
    counts: &'a [MPI_Count],
    large: bool,
    i: usize,
    a: usize,
    c: usize,
}

impl<'a> Args<'a> {
    fn new(ints: &'a [c_int], addrs: &'a [MPI_Aint], counts: &'a [MPI_Count], large: bool) -> Self {
        Args {
            ints,
            addrs,
            counts,
            large,
            i: 0,
            a: 0,
            c: 0,
        }
    }

    fn short() -> Error {
        Error::unsupported("MPI_Type_get_contents returned fewer arguments than the combiner takes")
    }

    /// A true C int argument.
    fn int(&mut self) -> Result<i64> {
        let v = *self.ints.get(self.i).ok_or_else(Self::short)?;
        self.i += 1;
        Ok(v as i64)
    }

    /// A count-like argument: an int in classic calls, an MPI_Count in `_c` ones.
    fn cnt(&mut self) -> Result<i64> {
        if self.large {
            let v = *self.counts.get(self.c).ok_or_else(Self::short)?;
            self.c += 1;
            Ok(v)
        } else {
            self.int()
        }
    }

    /// A byte displacement: an MPI_Aint in classic calls, an MPI_Count in `_c` ones.
    fn addr(&mut self) -> Result<i64> {
        if self.large {
            self.cnt()
        } else {
            let v = *self.addrs.get(self.a).ok_or_else(Self::short)?;
            self.a += 1;
            #[allow(clippy::unnecessary_cast)] // MPI_Aint is not i64 everywhere
            Ok(v as i64)
        }
    }

    /// An array length given as a count.
    fn len(&mut self) -> Result<usize> {
        usize::try_from(self.cnt()?).map_err(|_| Self::short())
    }

    /// An array length given as a C int (ndims).
    fn int_len(&mut self) -> Result<usize> {
        usize::try_from(self.int()?).map_err(|_| Self::short())
    }

    fn cnts(&mut self, n: usize, out: &mut Vec<Seg>) -> Result<()> {
        if self.large {
            self.counts
                .get(self.c..self.c + n)
                .ok_or_else(Self::short)?;
            out.push(Seg::Counts(self.c, n));
            self.c += n;
        } else {
            self.ints.get(self.i..self.i + n).ok_or_else(Self::short)?;
            out.push(Seg::Ints(self.i, n));
            self.i += n;
        }
        Ok(())
    }

    fn addrs(&mut self, n: usize, out: &mut Vec<Seg>) -> Result<()> {
        if self.large {
            self.cnts(n, out)
        } else {
            self.addrs.get(self.a..self.a + n).ok_or_else(Self::short)?;
            out.push(Seg::Addrs(self.a, n));
            self.a += n;
            Ok(())
        }
    }

    fn done(&self) -> bool {
        self.i == self.ints.len() && self.a == self.addrs.len() && self.c == self.counts.len()
    }
}
