//! External bytes → tree: the header (§4) checked here, and the nodes read
//! by the one reader (`format::reader`) into a tree by its tree-building
//! visitor. (`signature::stream::read` checks the header's hash against
//! the tree's.)

use super::{Encoding, CHECKSUM_LEN, HASH_AT, HEADER_LEN, MAGIC, MAGIC_V4, VERSION, VERSION_V4};
use crate::error::{Error, Result};
use crate::format::codes::{Combiner, Distribution, Order, Predefined};
use crate::format::layout::Children;
use crate::format::reader::{self, Fields, Head, Stop, Visitor};
use crate::format::tree::{Attribute, Bounds, Kind, Node};
use crate::scratch::with_buffer;

/// An external stream whose checksum (if any) and header are checked.
#[derive(Debug, Clone, Copy)]
pub struct Opened<'a> {
    /// The stream without its checksum: header and nodes.
    pub body: &'a [u8],
    /// The header's signature hash.
    pub hash: u64,
    /// The format version (5 or 4).
    pub version: u32,
    /// The checksum, verified; None for a version-4 stream, which has none.
    pub checksum: Option<u32>,
}

/// Checks the checksum and the header (spec/external.md §4): first the
/// checksum of every stream whose magic word is within one bit of
/// version 5's, before any other byte is interpreted.
pub fn open(bytes: &[u8]) -> Result<Opened<'_>> {
    let word = |at: usize, what| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes(b.try_into().expect("4 bytes")))
            .ok_or(Error::truncated(
                what,
                at,
                4,
                bytes.len().saturating_sub(at),
            ))
    };
    let magic = word(0, "the magic word")?;
    let (body, version, checksum) = if super::near(magic, MAGIC) {
        let (body, stored) = verify(bytes)?;
        (body, VERSION, Some(stored))
    } else if magic == MAGIC_V4 {
        (bytes, VERSION_V4, None)
    } else {
        return Err(Error::corrupt(
            0,
            format!("not an mpix-marshal external stream (first word {magic:#010x}, expected {MAGIC:#010x} \"MXCT\" or version 4's {MAGIC_V4:#010x} \"MXDT\")"),
        ));
    };
    if magic != MAGIC && checksum.is_some() {
        // Its checksum holds: not a flipped bit, another stream (such as a
        // compressed one, "MXCP" is one bit from "MXCT").
        return Err(Error::corrupt(
            0,
            format!("not an mpix-marshal external stream (first word {magic:#010x}, expected {MAGIC:#010x} \"MXCT\")"),
        ));
    }
    let hash = header(body, version)?;
    Ok(Opened {
        body,
        hash,
        version,
        checksum,
    })
}

/// The stream without its last 4 bytes, and those bytes, once they are
/// the CRC-32C of the rest.
fn verify(bytes: &[u8]) -> Result<(&[u8], u32)> {
    let least = HEADER_LEN + 4 + CHECKSUM_LEN;
    if bytes.len() < least {
        return Err(Error::truncated(
            "a checksummed stream (header, a node and the checksum)",
            0,
            least,
            bytes.len(),
        ));
    }
    let (body, tail) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
    let stored = u32::from_be_bytes(tail.try_into().expect("4 bytes"));
    let computed = super::checksum(body);
    if stored != computed {
        return Err(Error::Checksum {
            offset: body.len(),
            stored,
            computed,
        });
    }
    Ok((body, stored))
}

/// Checks the header's version and hash (spec/external.md §4) and returns
/// the signature hash.
fn header(bytes: &[u8], expected: u32) -> Result<u64> {
    let word = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    if bytes.len() < HEADER_LEN {
        return Err(Error::truncated(
            "the version and signature hash",
            HASH_AT,
            8,
            bytes.len().saturating_sub(HASH_AT),
        ));
    }
    let (high, low) = (word(4), word(8));
    let version = high >> 29;
    if version != expected {
        // Version 1 had a 32-bit version word, 0x00010000.
        let version = if high == 0x0001_0000 { 1 } else { version };
        let why = match version {
            2 => {
                ": version 2 streams do not record the bounds of byte-displaced levels, \
                  so their rebuilt extent could differ from the original's"
            }
            3 => {
                ": version 3 streams number the Fortran INTEGER, LOGICAL and CHARACTER \
                  types otherwise than the MPI-5.0 ABI, whose numbers version 4 uses"
            }
            _ => "",
        };
        return Err(Error::corrupt(
            HASH_AT,
            format!(
                "unsupported format version {version} behind magic word {:#010x} (this library reads version {VERSION}, and version {VERSION_V4} behind \"MXDT\"){why}",
                word(0)
            ),
        ));
    }
    let hash = u64::from(high & 0x1fff_ffff) << 32 | u64::from(low);
    if hash >= super::HASH_MODULUS {
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
    with_buffer(&STACKS, |stacks| {
        let mut b = TreeBuilder {
            pending: std::mem::take(&mut stacks.0),
            fields: std::mem::take(&mut stacks.1),
            done: Vec::new(),
        };
        let read = reader::read(bytes, start, enc, &mut b);
        let root = match read {
            Ok(()) => Ok(b.done.pop().expect("the root ended last")),
            Err(Stop(e)) => Err(*e.expect("the tree builder takes every valid stream")),
        };
        if b.fields.capacity() <= 1 << 16 {
            b.pending.clear();
            b.fields.clear();
            (stacks.0, stacks.1) = (b.pending, b.fields);
        }
        root
    })
}

thread_local! {
    static STACKS: std::cell::RefCell<(Vec<Pending>, Vec<i64>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// The reader's visitor that builds the tree.
struct TreeBuilder {
    /// The derived nodes whose children are being read, root first.
    pending: Vec<Pending>,
    /// Their int fields, concatenated; each knows where its own start.
    fields: Vec<i64>,
    /// Nodes read whole and not yet taken by their parent.
    done: Vec<Node>,
}

/// A derived node waiting for its children.
struct Pending {
    combiner: Combiner,
    large: bool,
    bounds: bool,
    correction: bool,
    name: Option<Vec<u8>>,
    attrs: Vec<Attribute>,
    /// Where its fields start in `TreeBuilder::fields`.
    fields: usize,
    /// Its children, when it has many (a struct's members, VALUE_INDEX's
    /// pair): how many of `done` are its.
    children: usize,
}

impl<'a> Visitor<'a> for TreeBuilder {
    fn named(&mut self, p: Predefined) -> std::result::Result<(), Stop> {
        self.done.push(Node::named(p));
        Ok(())
    }

    fn derived(&mut self, head: &Head<'a>, f: Fields<'a>) -> std::result::Result<(), Stop> {
        let base = self.fields.len();
        let unit = if f.wide { 8 } else { 4 };
        self.fields.extend(
            f.bytes
                .chunks_exact(unit)
                .map(|b| reader::decode_int(b, f.wide, f.enc)),
        );
        self.pending.push(Pending {
            combiner: head.combiner,
            large: head.large,
            bounds: head.bounds,
            correction: head.correction,
            name: head.name.map(<[u8]>::to_vec),
            attrs: head.attrs.to_vec(),
            fields: base,
            children: f.children,
        });
        Ok(())
    }

    fn end(&mut self) -> std::result::Result<(), Stop> {
        let p = self.pending.pop().expect("derived came first");
        let base = p.fields;
        // Its children are the last of `done`.
        let kids = if p.combiner.rule().children == Children::One {
            Kids::One(Box::new(self.done.pop().expect("its child ended")))
        } else {
            Kids::Many(self.done.split_off(self.done.len() - p.children))
        };
        let node = assemble(p, &self.fields[base..], kids);
        self.fields.truncate(base);
        self.done.push(node);
        Ok(())
    }
}

/// A node's children: the one of most combiners, or the many of a struct.
enum Kids {
    One(Box<Node>),
    Many(Vec<Node>),
}

/// Builds the node from its parts, the inverse of `write::int_fields`.
#[inline(never)]
fn assemble(head: Pending, all: &[i64], kids: Kids) -> Node {
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
    let (mut one, mut many) = match kids {
        Kids::One(old) => (Some(old), Vec::new()),
        Kids::Many(many) => (None, many),
    };
    let mut old = || one.take().expect("the rule counted this child");
    let arr = |from: usize, n: usize| f[from..from + n].to_vec();
    let kind = match c {
        Combiner::Named => unreachable!("a NAMED node is not derived"),
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
                order: Order::from_code(f[1 + 3 * n]).expect("checked by the reader"),
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
                    .map(|&d| Distribution::from_code(d).expect("checked by the reader"))
                    .collect(),
                dargs: arr(3 + 2 * n, n),
                psizes: arr(3 + 3 * n, n),
                order: Order::from_code(f[3 + 4 * n]).expect("checked by the reader"),
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
                .expect("the rule counted two");
            Kind::ValueIndex { pair }
        }
    };
    Node {
        name: head.name,
        large: head.large,
        kind,
        attrs: head.attrs,
        bounds,
        correction: head.correction,
    }
}
