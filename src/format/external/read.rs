//! External bytes → tree. Strict: any value spec/external.md does not allow
//! is an error that names the byte offset, and no allocation is larger
//! than what the remaining input could describe.

use super::{
    Encoding, FLAGS_KNOWN, FLAG_ATTRS, FLAG_BOUNDS, FLAG_CORRECTION, FLAG_LARGE, FLAG_NAME,
    FLAG_WIDE, HASH_AT, HEADER_LEN, MAGIC, VERSION,
};
use crate::error::{Error, Result};
use crate::format::codes::{Combiner, Distribution, Order, Predefined};
use crate::format::tree::{
    records_bounds, supports_large, validate, Attribute, Bounds, Kind, Node, MAX_ATTR_NAME_LEN,
    MAX_DEPTH, MAX_NAME_LEN,
};
use crate::scratch::with_buffer;
use crate::signature::{self, default64, HashKind};
use xdr_codec::Unpack;

/// Parses a whole external stream, and checks that the header's signature
/// hash is the tree's.
pub fn read(bytes: &[u8]) -> Result<Node> {
    let hash = header(bytes)?;
    let root = read_nodes(bytes, HEADER_LEN, Encoding::Xdr)?;
    // A tree whose signature cannot be computed breaks a rule of §9: say which.
    let actual = signature::signature_hash(&root, HashKind::DEFAULT)
        .map_err(|e| validate(&root).err().unwrap_or(e))?;
    if actual != hash {
        return Err(Error::corrupt(
            HASH_AT,
            format!("the header's signature hash {hash:#018x} is not the type's ({actual:#018x})"),
        ));
    }
    Ok(root)
}

/// Checks the header (spec/external.md §4) and returns its signature hash.
pub(super) fn header(bytes: &[u8]) -> Result<u64> {
    // Read on every unmarshal: plain loads, no reader.
    let word = |at: usize, what| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes(b.try_into().expect("4 bytes")))
            .ok_or(Error::Truncated {
                what,
                offset: at,
                needed: 4,
                left: bytes.len().saturating_sub(at),
            })
    };
    let magic = word(0, "the magic word")?;
    if magic != MAGIC {
        return Err(Error::corrupt(
            0,
            format!("not an mpix-marshal external stream (first word {magic:#010x}, expected {MAGIC:#010x} \"MXDT\")"),
        ));
    }
    let high = word(4, "the version and signature hash")?;
    let low = word(8, "the version and signature hash")?;
    let version = high >> 29;
    if version != VERSION {
        // Version 1 had a 32-bit version word, 0x00010000.
        let version = if high == 0x0001_0000 { 1 } else { version };
        let why = if version == 2 {
            ": version 2 streams do not record the bounds of byte-displaced levels, \
             so their rebuilt extent could differ from the original's"
        } else {
            ""
        };
        return Err(Error::corrupt(
            HASH_AT,
            format!(
                "unsupported format version {version} (this library reads version {VERSION}){why}"
            ),
        ));
    }
    let hash = u64::from(high & 0x1fff_ffff) << 32 | u64::from(low);
    if hash >= default64::P {
        return Err(Error::corrupt(
            HASH_AT,
            format!("signature hash {hash:#018x} is not below 2^61 - 1"),
        ));
    }
    Ok(hash)
}

/// Parses the node grammar in `enc` from byte `start` of `bytes` (after a
/// header the caller checked) to the very end.
pub fn read_nodes(bytes: &[u8], start: usize, enc: Encoding) -> Result<Node> {
    // The stacks are the thread's, reused: allocating them anew cost more
    // than reading a small type (an allocation of 1 KiB or more makes
    // glibc's malloc consolidate its free lists).
    with_buffer(&STACKS, |(heads, fields)| {
        let mut r = Reader::new(bytes, start, enc);
        r.heads = std::mem::take(heads);
        r.fields = std::mem::take(fields);
        let root = r.root();
        if r.fields.capacity() <= 1 << 16 {
            r.heads.clear();
            r.fields.clear();
            (*heads, *fields) = (r.heads, r.fields);
        }
        root
    })
}

thread_local! {
    static STACKS: std::cell::RefCell<(Vec<Head>, Vec<i64>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    enc: Encoding,
    /// The heads of the nodes being read, root first: a node's head waits
    /// here while its children are read.
    heads: Vec<Head>,
    /// Their integer fields, concatenated; each head knows where its own
    /// start. One buffer for the whole stream instead of one per node.
    fields: Vec<i64>,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8], pos: usize, enc: Encoding) -> Reader<'a> {
        Reader {
            bytes,
            pos,
            enc,
            heads: Vec::new(),
            fields: Vec::new(),
        }
    }
    /// The root node, which must end the input.
    fn root(&mut self) -> Result<Node> {
        let root = self.node(0)?;
        if self.pos != self.bytes.len() {
            return Err(Error::corrupt(
                self.pos,
                format!(
                    "{} bytes follow the end of the type",
                    self.bytes.len() - self.pos
                ),
            ));
        }
        Ok(root)
    }

    fn left(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn need(&self, what: &'static str, n: usize) -> Result<()> {
        if self.left() < n {
            return Err(Error::Truncated {
                what,
                offset: self.pos,
                needed: n,
                left: self.left(),
            });
        }
        Ok(())
    }

    fn u32(&mut self, what: &'static str) -> Result<u32> {
        self.need(what, 4)?;
        let v = if self.enc == Encoding::Xdr {
            let mut s = &self.bytes[self.pos..self.pos + 4];
            u32::unpack(&mut s)
                .map_err(|e| Error::corrupt(self.pos, e))?
                .0
        } else {
            u32::from_ne_bytes(self.bytes[self.pos..self.pos + 4].try_into().unwrap())
        };
        self.pos += 4;
        Ok(v)
    }

    fn int(&mut self, what: &'static str, wide: bool) -> Result<i64> {
        let unit = if wide { 8 } else { 4 };
        self.need(what, unit)?;
        let b = &self.bytes[self.pos..self.pos + unit];
        let v = decode_int(b, wide, self.enc);
        self.pos += unit;
        Ok(v)
    }

    /// An array length, refused when the rest of the stream could not hold
    /// `per_item` bytes for each element.
    fn len(&mut self, what: &'static str, wide: bool, per_item: usize) -> Result<usize> {
        let at = self.pos;
        let n = self.int(what, wide)?;
        let n = usize::try_from(n)
            .map_err(|_| Error::corrupt(at, format!("{what} {n} is negative")))?;
        if n.saturating_mul(per_item) > self.left() {
            return Err(Error::corrupt(
                at,
                format!(
                    "{what} {n} needs at least {} more bytes, {} are left",
                    n.saturating_mul(per_item),
                    self.left()
                ),
            ));
        }
        Ok(n)
    }

    /// `n` integer fields appended to `out`; the hot loop of large types,
    /// so it converts the XDR words directly.
    fn ints(&mut self, what: &'static str, wide: bool, n: usize, out: &mut Vec<i64>) -> Result<()> {
        let unit = if wide { 8 } else { 4 };
        self.need(what, n * unit)?;
        let bytes = &self.bytes[self.pos..self.pos + n * unit];
        let enc = self.enc;
        out.extend(bytes.chunks_exact(unit).map(|b| decode_int(b, wide, enc)));
        self.pos += n * unit;
        Ok(())
    }

    fn name(&mut self) -> Result<Vec<u8>> {
        self.string("a name", MAX_NAME_LEN, true)
    }

    /// An XDR opaque of 1..=`max` bytes (0..=`max` when not `nonempty`)
    /// with zero padding; names must hold no NUL byte.
    fn string(&mut self, what: &'static str, max: usize, name: bool) -> Result<Vec<u8>> {
        let at = self.pos;
        let len = self.u32(what)? as usize;
        if (name && len == 0) || len > max {
            let min = usize::from(name);
            return Err(Error::corrupt(
                at,
                format!("the length {len} of {what} is not in {min}..={max}"),
            ));
        }
        let padded = self.enc.padded(len);
        self.need(what, padded)?;
        let bytes = &self.bytes[self.pos..self.pos + len];
        if name {
            if let Some(i) = bytes.iter().position(|&b| b == 0) {
                return Err(Error::corrupt(
                    self.pos + i,
                    format!("{what} contains a NUL byte"),
                ));
            }
        }
        if let Some(i) = self.bytes[self.pos + len..self.pos + padded]
            .iter()
            .position(|&b| b != 0)
        {
            return Err(Error::corrupt(
                self.pos + len + i,
                format!("the padding of {what} is not zero"),
            ));
        }
        let bytes = bytes.to_vec();
        self.pos += padded;
        Ok(bytes)
    }

    /// A node's attribute block (spec/external.md §5.5).
    fn attributes(&mut self) -> Result<Vec<Attribute>> {
        let at = self.pos;
        let n = self.u32("an attribute count")? as usize;
        // Each attribute takes at least two lengths and a 1-byte name.
        let least = 8 + self.enc.padded(1);
        if n == 0 || n.saturating_mul(least) > self.left() {
            return Err(Error::corrupt(
                at,
                format!(
                    "attribute count {n} is zero or more than the {} bytes left can hold",
                    self.left()
                ),
            ));
        }
        let mut attrs: Vec<Attribute> = Vec::with_capacity(n);
        for _ in 0..n {
            let name_at = self.pos;
            let name = self.string("an attribute's canonical name", MAX_ATTR_NAME_LEN, true)?;
            if attrs.last().is_some_and(|prev| prev.name >= name) {
                return Err(Error::corrupt(
                    name_at,
                    "attribute names are not distinct and in increasing byte order",
                ));
            }
            let value = self.string(
                "an attribute's value",
                crate::marshal::attributes::MAX_ATTR_VALUE,
                false,
            )?;
            attrs.push(Attribute { name, value });
        }
        Ok(attrs)
    }

    /// One node and its subtree.
    fn node(&mut self, depth: usize) -> Result<Node> {
        self.boxed_node(depth).map(|node| *node)
    }

    /// `node`, boxed: the recursion. The per-combiner work happens in
    /// helpers that return before the recursion, and only boxes move
    /// through this frame, so each level costs one small stack frame, debug
    /// builds included. (With `Head` and `Node`, 184 bytes, moved by value,
    /// an unoptimized build gave every temporary its own slot and a level
    /// took 4.2 KiB: refusing a stream at the depth limit overflowed a
    /// 2 MiB thread stack. Issue 5, tests/limits.rs.)
    fn boxed_node(&mut self, depth: usize) -> Result<Box<Node>> {
        if let Some(p) = self.named(depth)? {
            return Ok(Box::new(Node::named(p)));
        }
        self.derived(depth).map(Box::new)
    }

    /// A struct member, straight into the struct's vector (a NAMED member
    /// makes no allocation of its own).
    fn member(&mut self, depth: usize, into: &mut Vec<Node>) -> Result<()> {
        let node = match self.named(depth)? {
            Some(p) => Node::named(p),
            None => self.derived(depth)?,
        };
        into.push(node);
        Ok(())
    }

    /// A derived node (its word not yet read). Only the node itself moves
    /// through this frame; the per-combiner work happens in helpers.
    fn derived(&mut self, depth: usize) -> Result<Node> {
        self.head(depth)?;
        let h = self.heads.last().expect("pushed by head");
        let (combiner, base, wide, bounded) = (h.combiner, h.fields, h.wide, h.bounds);
        self.read_fields(combiner, wide, bounded)?;
        // Most nodes have one child: it needs no vector of its own.
        let n = children(combiner, &self.fields[base..]);
        let mut kids = Kids::default();
        if n == 1 && !is_struct(combiner) {
            kids.one = Some(self.boxed_node(depth + 1)?);
        } else {
            kids.many.reserve_exact(n);
            for _ in 0..n {
                self.member(depth + 1, &mut kids.many)?;
            }
        }
        let head = self.heads.pop().expect("pushed by head");
        let node = assemble(head, &self.fields[base..], kids);
        self.fields.truncate(base);
        node
    }

    /// The predefined type of a NAMED node, which is read whole; None (and
    /// nothing read) for any other node.
    fn named(&mut self, depth: usize) -> Result<Option<Predefined>> {
        let at = self.pos;
        if depth >= MAX_DEPTH {
            return Err(Error::corrupt(
                at,
                format!("types nest deeper than {MAX_DEPTH} levels"),
            ));
        }
        let word = self.u32("a node word")?;
        if word & 0xffff != Combiner::Named.code() {
            self.pos = at;
            return Ok(None);
        }
        // The high half is the predefined code, not flags (§5.2).
        let code = word >> 16;
        let p = Predefined::from_code(code).ok_or_else(|| {
            Error::corrupt(at, format!("unknown predefined datatype code {code:#x}"))
        })?;
        Ok(Some(p))
    }

    /// A derived node's word, flags, name and attributes, pushed on `heads`
    /// (`named` has read the depth and NAMED checks).
    #[inline(never)]
    fn head(&mut self, depth: usize) -> Result<()> {
        let at = self.pos;
        debug_assert!(depth < MAX_DEPTH);
        let word = self.u32("a node word")?;
        let combiner = Combiner::from_code(word & 0xffff).ok_or_else(|| {
            Error::corrupt(at, format!("unknown combiner code {}", word & 0xffff))
        })?;
        debug_assert_ne!(combiner, Combiner::Named);
        let flags = word & !0xffff;
        if flags & !FLAGS_KNOWN != 0 {
            return Err(Error::corrupt(
                at,
                format!("unknown node flags {:#010x}", flags & !FLAGS_KNOWN),
            ));
        }
        let (named, wide, large, attributed) = (
            flags & FLAG_NAME != 0,
            flags & FLAG_WIDE != 0,
            flags & FLAG_LARGE != 0,
            flags & FLAG_ATTRS != 0,
        );
        let (bounds, correction) = (flags & FLAG_BOUNDS != 0, flags & FLAG_CORRECTION != 0);
        if bounds && !records_bounds(combiner) {
            return Err(Error::corrupt(
                at,
                format!("{} records no bounds", combiner.mpi_name()),
            ));
        }
        if correction && combiner != Combiner::Resized {
            return Err(Error::corrupt(
                at,
                format!(
                    "{} cannot be an extent correction (only RESIZED can)",
                    combiner.mpi_name()
                ),
            ));
        }
        let predefined = matches!(
            combiner,
            Combiner::F90Real | Combiner::F90Complex | Combiner::F90Integer
        );
        if predefined && (named || large || attributed) {
            return Err(Error::corrupt(
                at,
                format!(
                    "{} takes no name, attributes or large flag",
                    combiner.mpi_name()
                ),
            ));
        }
        if large && !supports_large(combiner) {
            return Err(Error::corrupt(
                at,
                format!("{} has no large-count form", combiner.mpi_name()),
            ));
        }
        let name = if named { Some(self.name()?) } else { None };
        let attrs = if attributed {
            self.attributes()?
        } else {
            Vec::new()
        };
        self.heads.push(Head {
            combiner,
            wide,
            large,
            bounds,
            correction,
            name,
            attrs,
            fields_at: self.pos,
            fields: self.fields.len(),
        });
        Ok(())
    }

    /// The node's integer fields in stream order (the inverse of
    /// `write::int_fields`), with array lengths checked against the input
    /// left and order and distribution codes checked where they stand.
    #[inline(never)]
    fn read_fields(&mut self, combiner: Combiner, w: bool, bounds: bool) -> Result<()> {
        // Appended to `self.fields`, which is taken while `self` reads.
        let mut f = std::mem::take(&mut self.fields);
        let mut result = self.fields_into(combiner, w, &mut f);
        if result.is_ok() && bounds {
            result = (|| {
                f.extend([
                    self.int("a recorded lower bound", w)?,
                    self.int("a recorded extent", w)?,
                ]);
                Ok(())
            })();
        }
        self.fields = f;
        result
    }

    fn fields_into(&mut self, combiner: Combiner, w: bool, f: &mut Vec<i64>) -> Result<()> {
        let unit = if w { 8 } else { 4 };
        // Every child node takes at least 4 bytes (a NAMED node's one word).
        const CHILD: usize = 4;
        match combiner {
            Combiner::Named => unreachable!("read by head"),
            Combiner::Dup | Combiner::ValueIndex => {}
            Combiner::F90Real | Combiner::F90Complex => {
                f.extend([self.int("a precision", w)?, self.int("a range", w)?])
            }
            Combiner::F90Integer => f.push(self.int("a range", w)?),
            Combiner::Contiguous => f.push(self.int("a count", w)?),
            Combiner::Vector | Combiner::Hvector | Combiner::HvectorInteger => f.extend([
                self.int("a count", w)?,
                self.int("a blocklength", w)?,
                self.int("a stride", w)?,
            ]),
            Combiner::Indexed
            | Combiner::Hindexed
            | Combiner::HindexedInteger
            | Combiner::Struct
            | Combiner::StructInteger => {
                let child = if is_struct(combiner) { CHILD } else { 0 };
                let n = self.len("a count", w, 2 * unit + child)?;
                f.reserve(1 + 2 * n);
                f.push(n as i64);
                self.ints("blocklengths and displacements", w, 2 * n, f)?;
            }
            Combiner::IndexedBlock | Combiner::HindexedBlock => {
                let n = self.len("a count", w, unit)?;
                f.reserve(2 + n);
                f.push(n as i64);
                f.push(self.int("a blocklength", w)?);
                self.ints("displacements", w, n, f)?;
            }
            Combiner::Subarray => {
                let n = self.len("ndims", w, 3 * unit)?;
                f.push(n as i64);
                self.ints("sizes, subsizes and starts", w, 3 * n, f)?;
                f.push(self.order(w)? as i64);
            }
            Combiner::Darray => {
                f.extend([self.int("a size", w)?, self.int("a rank", w)?]);
                let n = self.len("ndims", w, 4 * unit)?;
                f.push(n as i64);
                self.ints("gsizes", w, n, f)?;
                for _ in 0..n {
                    let at = self.pos;
                    let d = self.int("a distribution", w)?;
                    let d = Distribution::from_code(d).ok_or_else(|| {
                        Error::corrupt(at, format!("unknown distribution code {d}"))
                    })?;
                    f.push(d as i64);
                }
                self.ints("dargs and psizes", w, 2 * n, f)?;
                f.push(self.order(w)? as i64);
            }
            Combiner::Resized => {
                f.extend([self.int("a lower bound", w)?, self.int("an extent", w)?])
            }
        }
        Ok(())
    }

    fn order(&mut self, wide: bool) -> Result<Order> {
        let at = self.pos;
        let o = self.int("an order", wide)?;
        Order::from_code(o).ok_or_else(|| Error::corrupt(at, format!("unknown order code {o}")))
    }
}

/// One int field of `b.len()` (4 or 8) bytes.
#[inline(always)]
fn decode_int(b: &[u8], wide: bool, enc: Encoding) -> i64 {
    match (wide, enc) {
        (true, Encoding::Xdr) => i64::from_be_bytes(b.try_into().unwrap()),
        (true, Encoding::Native) => i64::from_ne_bytes(b.try_into().unwrap()),
        (false, Encoding::Xdr) => i32::from_be_bytes(b.try_into().unwrap()) as i64,
        (false, Encoding::Native) => i32::from_ne_bytes(b.try_into().unwrap()) as i64,
    }
}

/// A node's word, flags and name, as read before its fields.
struct Head {
    combiner: Combiner,
    wide: bool,
    large: bool,
    /// BOUNDS: the last two fields are the recorded lb and extent.
    bounds: bool,
    correction: bool,
    name: Option<Vec<u8>>,
    attrs: Vec<Attribute>,
    fields_at: usize,
    /// Where its fields start in `Reader::fields`.
    fields: usize,
}

fn is_struct(c: Combiner) -> bool {
    matches!(c, Combiner::Struct | Combiner::StructInteger)
}

/// A node's children: the one of most combiners, or the many of a struct.
#[derive(Default)]
struct Kids {
    one: Option<Box<Node>>,
    many: Vec<Node>,
}

/// How many child nodes follow a node's fields.
fn children(c: Combiner, fields: &[i64]) -> usize {
    match c {
        Combiner::Named | Combiner::F90Real | Combiner::F90Complex | Combiner::F90Integer => 0,
        Combiner::Struct | Combiner::StructInteger => fields[0] as usize,
        Combiner::ValueIndex => 2,
        _ => 1,
    }
}

/// Builds the node from its parts, the inverse of `write::int_fields`.
#[inline(never)]
fn assemble(head: Head, all: &[i64], kids: Kids) -> Result<Node> {
    let c = head.combiner;
    let (f, bounds) = if head.bounds {
        let (f, b) = all.split_at(all.len() - 2);
        (
            f,
            Some(Bounds {
                lb: b[0],
                extent: b[1],
            }),
        )
    } else {
        (all, None)
    };
    let mut one = kids.one;
    let mut many = kids.many;
    let mut old = || one.take().expect("children() counted this child");
    let arr = |from: usize, n: usize| f[from..from + n].to_vec();
    let kind = match c {
        Combiner::Named => unreachable!("read by head"),
        Combiner::F90Real => Kind::F90Real { p: f[0], r: f[1] },
        Combiner::F90Complex => Kind::F90Complex { p: f[0], r: f[1] },
        Combiner::F90Integer => Kind::F90Integer { r: f[0] },
        Combiner::Dup => Kind::Dup(old()),
        Combiner::Contiguous => Kind::Contiguous {
            count: f[0],
            old: old(),
        },
        Combiner::Vector => Kind::Vector {
            count: f[0],
            blocklength: f[1],
            stride: f[2],
            old: old(),
        },
        Combiner::Hvector | Combiner::HvectorInteger => Kind::Hvector {
            count: f[0],
            blocklength: f[1],
            stride: f[2],
            old: old(),
            legacy: c == Combiner::HvectorInteger,
        },
        Combiner::Indexed
        | Combiner::Hindexed
        | Combiner::HindexedInteger
        | Combiner::Struct
        | Combiner::StructInteger => {
            let n = f[0] as usize;
            let (blocklengths, displacements) = (arr(1, n), arr(1 + n, n));
            match c {
                Combiner::Indexed => Kind::Indexed {
                    blocklengths,
                    displacements,
                    old: old(),
                },
                Combiner::Hindexed | Combiner::HindexedInteger => Kind::Hindexed {
                    blocklengths,
                    displacements,
                    old: old(),
                    legacy: c == Combiner::HindexedInteger,
                },
                _ => Kind::Struct {
                    blocklengths,
                    displacements,
                    types: std::mem::take(&mut many),
                    legacy: c == Combiner::StructInteger,
                },
            }
        }
        Combiner::IndexedBlock | Combiner::HindexedBlock => {
            let n = f[0] as usize;
            let (blocklength, displacements) = (f[1], arr(2, n));
            if c == Combiner::IndexedBlock {
                Kind::IndexedBlock {
                    blocklength,
                    displacements,
                    old: old(),
                }
            } else {
                Kind::HindexedBlock {
                    blocklength,
                    displacements,
                    old: old(),
                }
            }
        }
        Combiner::Subarray => {
            let n = f[0] as usize;
            Kind::Subarray {
                sizes: arr(1, n),
                subsizes: arr(1 + n, n),
                starts: arr(1 + 2 * n, n),
                order: Order::from_code(f[1 + 3 * n]).expect("checked by fields"),
                old: old(),
            }
        }
        Combiner::Darray => {
            let n = f[2] as usize;
            Kind::Darray {
                size: f[0],
                rank: f[1],
                gsizes: arr(3, n),
                distribs: f[3 + n..3 + 2 * n]
                    .iter()
                    .map(|&d| Distribution::from_code(d).expect("checked by fields"))
                    .collect(),
                dargs: arr(3 + 2 * n, n),
                psizes: arr(3 + 3 * n, n),
                order: Order::from_code(f[3 + 4 * n]).expect("checked by fields"),
                old: old(),
            }
        }
        Combiner::Resized => Kind::Resized {
            lb: f[0],
            extent: f[1],
            old: old(),
        },
        Combiner::ValueIndex => {
            let pair: Box<[Node; 2]> = std::mem::take(&mut many)
                .into_boxed_slice()
                .try_into()
                .expect("children() counted two");
            Kind::ValueIndex { pair }
        }
    };
    // One encoding per tree: WIDE exactly when a field needs 64 bits.
    let needs_wide = all.iter().any(|&v| i32::try_from(v).is_err());
    if head.wide != needs_wide {
        return Err(Error::corrupt(
            head.fields_at,
            "the wide flag is set but every field fits 32 bits",
        ));
    }
    Ok(Node {
        name: head.name,
        large: head.large,
        kind,
        attrs: head.attrs,
        bounds,
        correction: head.correction,
    })
}
