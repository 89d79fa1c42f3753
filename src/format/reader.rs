//! The one reader of the node grammar (spec/external.md §5, in either
//! encoding). It checks every rule of the grammar: node words and flags,
//! names and attributes, each combiner's fields as `layout` lays them out
//! (array lengths against the input left, order and distribution codes,
//! one encoding per field width), the depth limit and the end of the
//! input. It reports each node to a `Visitor`: the tree builder
//! (`external::read`) and the direct unmarshal's program compiler
//! (`unmarshal::direct`) are two visitors of this reader, so every format
//! rule is written here once. Errors name the byte offset; no allocation
//! is larger than what the remaining input could describe.

use super::codes::{Combiner, Distribution, Order, Predefined};
use super::external::{
    Encoding, FLAGS_KNOWN, FLAG_ATTRS, FLAG_BOUNDS, FLAG_CORRECTION, FLAG_LARGE, FLAG_NAME,
    FLAG_WIDE,
};
use super::layout::{Children, Field};
use super::tree::{Attribute, MAX_ATTR_NAME_LEN, MAX_ATTR_VALUE, MAX_DEPTH, MAX_NAME_LEN};
use crate::error::Error;

/// Why a read stopped: an error in the stream, or (None) a visitor that
/// does not take this stream. Boxed: a small result keeps the reader's
/// returns in registers.
pub struct Stop(pub Option<Box<Error>>);

impl Stop {
    /// A visitor's refusal: the stream may be valid, this visitor does not
    /// take it.
    pub const DECLINED: Stop = Stop(None);
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop(Some(Box::new(e)))
    }
}

/// A derived node's word, flags, name and attributes.
pub struct Head<'a> {
    pub combiner: Combiner,
    pub wide: bool,
    pub large: bool,
    /// BOUNDS: the last two fields are the recorded lb and extent.
    pub bounds: bool,
    pub correction: bool,
    /// The name's bytes (checked: 1..=MAX_NAME_LEN bytes, no NUL).
    pub name: Option<&'a [u8]>,
    /// Checked: distinct names in increasing byte order.
    pub attrs: Attrs<'a>,
}

/// A node's checked attribute block, read in place: no allocation for the
/// visitors that only ask whether there is one (the direct path).
#[derive(Clone, Copy)]
pub struct Attrs<'a> {
    /// The attributes after their count, as they stand in the stream.
    bytes: &'a [u8],
    n: usize,
    enc: Encoding,
}

impl<'a> Attrs<'a> {
    const NONE: Attrs<'static> = Attrs {
        bytes: &[],
        n: 0,
        enc: Encoding::Xdr,
    };

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Each attribute's name and value, in stream order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a [u8], &'a [u8])> {
        let (mut rest, enc) = (self.bytes, self.enc);
        // Reads one opaque the reader checked: its length, bytes, padding.
        let mut opaque = move || {
            let (len, tail) = rest.split_at(4);
            let len = match enc {
                Encoding::Xdr => u32::from_be_bytes(len.try_into().expect("4 bytes")),
                Encoding::Native => u32::from_ne_bytes(len.try_into().expect("4 bytes")),
            } as usize;
            let (padded, tail) = tail.split_at(enc.padded(len));
            rest = tail;
            &padded[..len]
        };
        (0..self.n).map(move |_| {
            let name = opaque();
            (name, opaque())
        })
    }

    /// The attributes, owned (the tree's form).
    pub fn to_vec(self) -> Vec<Attribute> {
        self.iter()
            .map(|(name, value)| Attribute {
                name: name.to_vec(),
                value: value.to_vec(),
            })
            .collect()
    }
}

/// A node's int fields as they stand in the stream, recorded bounds last:
/// each `unit` (4 or 8) bytes in `enc`. Every field has been checked.
#[derive(Clone, Copy)]
pub struct Fields<'a> {
    pub bytes: &'a [u8],
    pub wide: bool,
    pub enc: Encoding,
    /// How many child nodes follow them.
    pub children: usize,
}

impl<'a> Fields<'a> {
    /// Field `i`.
    #[inline(always)]
    pub fn get(&self, i: usize) -> i64 {
        let unit = if self.wide { 8 } else { 4 };
        decode_int(&self.bytes[i * unit..(i + 1) * unit], self.wide, self.enc)
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.bytes.len() / if self.wide { 8 } else { 4 }
    }
}

/// One int field of `b.len()` (4 or 8) bytes.
#[inline(always)]
pub fn decode_int(b: &[u8], wide: bool, enc: Encoding) -> i64 {
    match (wide, enc) {
        (true, Encoding::Xdr) => i64::from_be_bytes(b.try_into().unwrap()),
        (true, Encoding::Native) => i64::from_ne_bytes(b.try_into().unwrap()),
        (false, Encoding::Xdr) => i32::from_be_bytes(b.try_into().unwrap()) as i64,
        (false, Encoding::Native) => i32::from_ne_bytes(b.try_into().unwrap()) as i64,
    }
}

/// What a reader reports, in stream order: each NAMED node; each derived
/// node's head and fields before its children, and its `end` after them.
pub trait Visitor<'a> {
    fn named(&mut self, p: Predefined) -> Result<(), Stop>;
    fn derived(&mut self, head: &Head<'a>, fields: Fields<'a>) -> Result<(), Stop>;
    /// The innermost derived node not yet ended has had all its children.
    fn end(&mut self) -> Result<(), Stop>;
    /// Whether the members of a struct that repeat its first derived
    /// member byte for byte may be skipped (`repeated` is then called).
    fn skips_repeated_members(&self) -> bool {
        false
    }
    /// The `more` members after the first were its bytes again, skipped.
    fn repeated(&mut self, _more: usize) {}
}

/// Reads the nodes from byte `start` of `bytes` to the very end, in `enc`,
/// reporting them to `v`.
pub fn read<'a, V: Visitor<'a>>(
    bytes: &'a [u8],
    start: usize,
    enc: Encoding,
    v: &mut V,
) -> Result<(), Stop> {
    let mut r = Reader {
        bytes,
        pos: start,
        enc,
    };
    r.node(0, v)?;
    if r.pos != bytes.len() {
        return Err(Error::corrupt(
            r.pos,
            format!("{} bytes follow the end of the type", bytes.len() - r.pos),
        )
        .into());
    }
    Ok(())
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    enc: Encoding,
}

impl<'a> Reader<'a> {
    #[inline(always)]
    fn left(&self) -> usize {
        self.bytes.len() - self.pos
    }

    #[inline(always)]
    fn need(&self, what: &'static str, n: usize) -> Result<(), Stop> {
        if self.left() < n {
            return Err(self.truncated(what, n));
        }
        Ok(())
    }

    #[cold]
    fn truncated(&self, what: &'static str, n: usize) -> Stop {
        Error::truncated(what, self.pos, n, self.left()).into()
    }

    /// The next `n` bytes.
    #[inline(always)]
    fn take(&mut self, what: &'static str, n: usize) -> Result<&'a [u8], Stop> {
        self.need(what, n)?;
        let bytes: &'a [u8] = self.bytes;
        let b = &bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(b)
    }

    #[inline(always)]
    fn u32(&mut self, what: &'static str) -> Result<u32, Stop> {
        let b: [u8; 4] = self.take(what, 4)?.try_into().expect("4 bytes");
        Ok(match self.enc {
            Encoding::Xdr => u32::from_be_bytes(b),
            Encoding::Native => u32::from_ne_bytes(b),
        })
    }

    #[inline(always)]
    fn int(&mut self, what: &'static str, wide: bool) -> Result<i64, Stop> {
        let enc = self.enc;
        let b = self.take(what, if wide { 8 } else { 4 })?;
        Ok(decode_int(b, wide, enc))
    }

    /// One node and its subtree. Only small values live in this frame, the
    /// recursion's: the per-node work happens in helpers that return before
    /// it recurses, so each level of a deep stream costs little stack, in
    /// debug builds too (tests/limits.rs reads streams at the depth limit
    /// on a 2 MiB thread).
    fn node<V: Visitor<'a>>(&mut self, depth: usize, v: &mut V) -> Result<(), Stop> {
        let at = self.pos;
        if depth >= MAX_DEPTH {
            return Err(
                Error::corrupt(at, format!("types nest deeper than {MAX_DEPTH} levels")).into(),
            );
        }
        let word = self.u32("a node word")?;
        if word & 0xffff == Combiner::Named.code() {
            // The high half is the predefined code, not flags (§5.2).
            let code = word >> 16;
            let p = Predefined::from_code(code).ok_or_else(|| {
                Error::corrupt(at, format!("unknown predefined datatype code {code:#x}"))
            })?;
            return v.named(p);
        }
        let (combiner, children) = self.head_and_fields(at, word, v)?;
        if children == 0 {
            return v.end();
        }
        let member_at = self.pos;
        self.node(depth + 1, v)?;
        let members = children > 1 && combiner.rule().children == Children::PerItem;
        if members && v.skips_repeated_members() && self.skip_repeats(member_at, children - 1) {
            v.repeated(children - 1);
            return v.end();
        }
        for _ in 1..children {
            self.node(depth + 1, v)?;
        }
        v.end()
    }

    /// Whether the `more` members after the derived member that spans
    /// `at..pos` are its bytes again (every tree has one encoding, so they
    /// are the same subtree); if so they are skipped.
    fn skip_repeats(&mut self, at: usize, more: usize) -> bool {
        let len = self.pos - at;
        if len == 4 {
            return false; // a NAMED member
        }
        let bytes: &'a [u8] = self.bytes;
        let member = &bytes[at..self.pos];
        let end = more.checked_mul(len).and_then(|n| n.checked_add(self.pos));
        let Some(rest) = end.and_then(|end| bytes.get(self.pos..end)) else {
            return false;
        };
        if !rest.chunks_exact(len).all(|m| m == member) {
            return false;
        }
        self.pos += rest.len();
        true
    }

    /// A derived node's flags, name, attributes and fields, reported to
    /// `v`; returns its combiner and how many child nodes follow.
    // Kept out of `node`'s frame where frames are large (debug builds).
    #[cfg_attr(debug_assertions, inline(never))]
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn head_and_fields<V: Visitor<'a>>(
        &mut self,
        at: usize,
        word: u32,
        v: &mut V,
    ) -> Result<(Combiner, usize), Stop> {
        let head = self.head(at, word)?;
        let combiner = head.combiner;
        let fields_at = self.pos;
        let n = self.fields(combiner, head.wide, head.bounds)?;
        let fields = Fields {
            bytes: &self.bytes[fields_at..self.pos],
            wide: head.wide,
            enc: self.enc,
            children: combiner.rule().child_count(n),
        };
        // One encoding per tree: WIDE exactly when a field needs 64 bits.
        if head.wide && (0..fields.len()).all(|i| i32::try_from(fields.get(i)).is_ok()) {
            return Err(Error::corrupt(
                fields_at,
                "the wide flag is set but every field fits 32 bits",
            )
            .into());
        }
        v.derived(&head, fields)?;
        Ok((combiner, fields.children))
    }

    /// A derived node's word (read at `at`), flags, name and attributes.
    #[inline(always)]
    fn head(&mut self, at: usize, word: u32) -> Result<Head<'a>, Stop> {
        let combiner = Combiner::from_code(word & 0xffff).ok_or_else(|| {
            Error::corrupt(at, format!("unknown combiner code {}", word & 0xffff))
        })?;
        let rule = combiner.rule();
        let flags = word & !0xffff;
        if flags & !rule.flags != 0 {
            return Err(flag_error(combiner, flags, at));
        }
        let has = |flag| flags & flag != 0;
        let (named, attributed) = (has(FLAG_NAME), has(FLAG_ATTRS));
        let name = if named {
            Some(self.string("a name", MAX_NAME_LEN, true)?)
        } else {
            None
        };
        let attrs = if attributed {
            self.attributes()?
        } else {
            Attrs::NONE
        };
        Ok(Head {
            combiner,
            wide: has(FLAG_WIDE),
            large: has(FLAG_LARGE),
            bounds: has(FLAG_BOUNDS),
            correction: has(FLAG_CORRECTION),
            name,
            attrs,
        })
    }

    /// An XDR opaque of 1..=`max` bytes (0..=`max` when not `nonempty`)
    /// with zero padding; names hold no NUL byte.
    fn string(&mut self, what: &'static str, max: usize, name: bool) -> Result<&'a [u8], Stop> {
        let at = self.pos;
        let len = self.u32(what)? as usize;
        if (name && len == 0) || len > max {
            let min = usize::from(name);
            return Err(Error::corrupt(
                at,
                format!("the length {len} of {what} is not in {min}..={max}"),
            )
            .into());
        }
        let start = self.pos;
        let padded = self.take(what, self.enc.padded(len))?;
        let (bytes, padding) = padded.split_at(len);
        if name {
            if let Some(i) = bytes.iter().position(|&b| b == 0) {
                return Err(
                    Error::corrupt(start + i, format!("{what} contains a NUL byte")).into(),
                );
            }
        }
        if let Some(i) = padding.iter().position(|&b| b != 0) {
            return Err(Error::corrupt(
                start + len + i,
                format!("the padding of {what} is not zero"),
            )
            .into());
        }
        Ok(bytes)
    }

    /// A node's attribute block (spec/external.md §5.5).
    fn attributes(&mut self) -> Result<Attrs<'a>, Stop> {
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
            )
            .into());
        }
        let start = self.pos;
        let mut prev: Option<&[u8]> = None;
        for _ in 0..n {
            let name_at = self.pos;
            let name = self.string("an attribute's canonical name", MAX_ATTR_NAME_LEN, true)?;
            if prev.is_some_and(|prev| prev >= name) {
                return Err(Error::corrupt(
                    name_at,
                    "attribute names are not distinct and in increasing byte order",
                )
                .into());
            }
            prev = Some(name);
            self.string("an attribute's value", MAX_ATTR_VALUE, false)?;
        }
        let bytes: &'a [u8] = self.bytes;
        Ok(Attrs {
            bytes: &bytes[start..self.pos],
            n,
            enc: self.enc,
        })
    }

    /// Checks and skips the node's fields as its combiner's rule lays them
    /// out, then its recorded bounds; returns its `Len` field's value.
    #[inline(always)]
    fn fields(&mut self, combiner: Combiner, wide: bool, bounds: bool) -> Result<usize, Stop> {
        let rule = combiner.rule();
        let unit = if wide { 8 } else { 4 };
        let bounds_len = if bounds { 2 * unit } else { 0 };
        // Most nodes' fields are a few ints: one check when they are there.
        if rule.fixed && self.left() >= rule.fields.len() * unit + bounds_len {
            self.pos += rule.fields.len() * unit + bounds_len;
            return Ok(0);
        }
        let mut n = 0;
        for field in rule.fields {
            match *field {
                Field::Int(what) => {
                    self.take(what, unit)?;
                }
                Field::Len(what) => {
                    let at = self.pos;
                    let v = self.int(what, wide)?;
                    n = usize::try_from(v)
                        .map_err(|_| Error::corrupt(at, format!("{what} {v} is negative")))?;
                    let per_item = rule.bytes_per_item(unit);
                    if n.saturating_mul(per_item) > self.left() {
                        return Err(Error::corrupt(
                            at,
                            format!(
                                "{what} {n} needs at least {} more bytes, {} are left",
                                n.saturating_mul(per_item),
                                self.left()
                            ),
                        )
                        .into());
                    }
                }
                Field::Arrays(what, k) => {
                    self.take(what, k * n * unit)?;
                }
                Field::Distribs => {
                    for _ in 0..n {
                        let at = self.pos;
                        let d = self.int("a distribution", wide)?;
                        if Distribution::from_code(d).is_none() {
                            return Err(Error::corrupt(
                                at,
                                format!("unknown distribution code {d}"),
                            )
                            .into());
                        }
                    }
                }
                Field::Order => {
                    let at = self.pos;
                    let o = self.int("an order", wide)?;
                    if Order::from_code(o).is_none() {
                        return Err(Error::corrupt(at, format!("unknown order code {o}")).into());
                    }
                }
            }
        }
        if bounds {
            self.take("a recorded lower bound", unit)?;
            self.take("a recorded extent", unit)?;
        }
        Ok(n)
    }
}

/// Why a node's flags are not its combiner's (`layout::Rule::flags`), in
/// the order the rules are stated: unknown flags first.
#[cold]
fn flag_error(combiner: Combiner, flags: u32, at: usize) -> Stop {
    let name = combiner.mpi_name();
    let has = |flag| flags & flag != 0;
    let what = if flags & !FLAGS_KNOWN != 0 {
        format!("unknown node flags {:#010x}", flags & !FLAGS_KNOWN)
    } else if has(FLAG_BOUNDS) && !combiner.rule().bounds {
        format!("{name} records no bounds")
    } else if has(FLAG_CORRECTION) && combiner != Combiner::Resized {
        format!("{name} cannot be an extent correction (only RESIZED can)")
    } else if combiner.rule().predefined {
        format!("{name} takes no name, attributes or large flag")
    } else {
        format!("{name} has no large-count form")
    };
    Error::corrupt(at, what).into()
}
