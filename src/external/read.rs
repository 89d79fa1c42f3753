//! External bytes → tree. Strict: any value spec/external.md does not allow
//! is an error that names the byte offset, and no allocation is larger
//! than what the remaining input could describe.

use super::{FLAGS_KNOWN, FLAG_LARGE, FLAG_NAME, FLAG_WIDE, HEADER_LEN, MAGIC, VERSION};
use crate::codes::{Combiner, Distribution, Order, Predefined};
use crate::error::{Error, Result};
use crate::tree::{supports_large, Kind, Node, MAX_DEPTH, MAX_NAME_LEN};
use xdr_codec::Unpack;

/// Parses a whole external stream.
pub fn read(bytes: &[u8]) -> Result<Node> {
    let mut r = Reader { bytes, pos: 0 };
    let magic = r.u32("the magic word")?;
    if magic != MAGIC {
        return Err(Error::corrupt(
            0,
            format!("not an mpix-marshal external stream (first word {magic:#010x}, expected {MAGIC:#010x} \"MXDT\")"),
        ));
    }
    let version = r.u32("the version word")?;
    if version != VERSION << 16 {
        return Err(Error::corrupt(
            4,
            format!(
                "unsupported format version {} with flags {:#06x} (this library reads version {VERSION} without flags)",
                version >> 16,
                version & 0xffff
            ),
        ));
    }
    debug_assert_eq!(r.pos, HEADER_LEN);
    let root = r.node(0)?;
    if r.pos != bytes.len() {
        return Err(Error::corrupt(
            r.pos,
            format!("{} bytes follow the end of the type", bytes.len() - r.pos),
        ));
    }
    Ok(root)
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
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
        let mut s = &self.bytes[self.pos..self.pos + 4];
        let (v, _) = u32::unpack(&mut s).map_err(|e| Error::corrupt(self.pos, e))?;
        self.pos += 4;
        Ok(v)
    }

    fn int(&mut self, what: &'static str, wide: bool) -> Result<i64> {
        if wide {
            self.need(what, 8)?;
            let mut s = &self.bytes[self.pos..self.pos + 8];
            let (v, _) = i64::unpack(&mut s).map_err(|e| Error::corrupt(self.pos, e))?;
            self.pos += 8;
            Ok(v)
        } else {
            self.need(what, 4)?;
            let mut s = &self.bytes[self.pos..self.pos + 4];
            let (v, _) = i32::unpack(&mut s).map_err(|e| Error::corrupt(self.pos, e))?;
            self.pos += 4;
            Ok(v as i64)
        }
    }

    /// An array length, refused when the rest of the stream could not hold
    /// `per_item` bytes for each element.
    fn len(&mut self, what: &'static str, wide: bool, per_item: usize) -> Result<usize> {
        let at = self.pos;
        let n = self.int(what, wide)?;
        let n = usize::try_from(n).map_err(|_| Error::corrupt(at, format!("{what} {n} is negative")))?;
        if n.saturating_mul(per_item) > self.left() {
            return Err(Error::corrupt(
                at,
                format!("{what} {n} needs at least {} more bytes, {} are left", n.saturating_mul(per_item), self.left()),
            ));
        }
        Ok(n)
    }

    fn ints(&mut self, what: &'static str, wide: bool, n: usize) -> Result<Vec<i64>> {
        self.need(what, n * if wide { 8 } else { 4 })?;
        (0..n).map(|_| self.int(what, wide)).collect()
    }

    fn name(&mut self) -> Result<Vec<u8>> {
        let at = self.pos;
        let len = self.u32("a name length")? as usize;
        if len == 0 || len > MAX_NAME_LEN {
            return Err(Error::corrupt(at, format!("name length {len} is not in 1..={MAX_NAME_LEN}")));
        }
        let padded = len.div_ceil(4) * 4;
        self.need("a name", padded)?;
        let name = &self.bytes[self.pos..self.pos + len];
        if let Some(i) = name.iter().position(|&b| b == 0) {
            return Err(Error::corrupt(self.pos + i, "a name contains a NUL byte"));
        }
        if let Some(i) = self.bytes[self.pos + len..self.pos + padded].iter().position(|&b| b != 0) {
            return Err(Error::corrupt(self.pos + len + i, "name padding is not zero"));
        }
        let name = name.to_vec();
        self.pos += padded;
        Ok(name)
    }

    fn node(&mut self, depth: usize) -> Result<Node> {
        let at = self.pos;
        if depth >= MAX_DEPTH {
            return Err(Error::corrupt(at, format!("types nest deeper than {MAX_DEPTH} levels")));
        }
        let word = self.u32("a node word")?;
        let combiner = Combiner::from_code(word & 0xffff)
            .ok_or_else(|| Error::corrupt(at, format!("unknown combiner code {}", word & 0xffff)))?;
        let flags = word & !0xffff;
        if flags & !FLAGS_KNOWN != 0 {
            return Err(Error::corrupt(at, format!("unknown node flags {:#010x}", flags & !FLAGS_KNOWN)));
        }
        let (named, wide, large) = (flags & FLAG_NAME != 0, flags & FLAG_WIDE != 0, flags & FLAG_LARGE != 0);
        let predefined = matches!(
            combiner,
            Combiner::Named | Combiner::F90Real | Combiner::F90Complex | Combiner::F90Integer
        );
        if predefined && (named || large) {
            return Err(Error::corrupt(at, format!("{} takes no name and no large flag", combiner.mpi_name())));
        }
        if large && !supports_large(combiner) {
            return Err(Error::corrupt(at, format!("{} has no large-count form", combiner.mpi_name())));
        }
        if combiner == Combiner::Named {
            if wide {
                return Err(Error::corrupt(at, "MPI_COMBINER_NAMED takes no flags"));
            }
            let code_at = self.pos;
            let code = self.u32("a predefined datatype code")?;
            let p = Predefined::from_code(code)
                .ok_or_else(|| Error::corrupt(code_at, format!("unknown predefined datatype code {code:#x}")))?;
            return Ok(Node::named(p));
        }
        let name = if named { Some(self.name()?) } else { None };
        let fields_at = self.pos;
        let w = wide;
        // Every node holds at least a node word and a code: 8 bytes a child.
        const CHILD: usize = 8;
        let child = |r: &mut Self| r.node(depth + 1).map(Box::new);
        let kind = match combiner {
            Combiner::Named => unreachable!("returned above"),
            Combiner::F90Real | Combiner::F90Complex => {
                let p = self.int("a precision", w)?;
                let r = self.int("a range", w)?;
                if combiner == Combiner::F90Real {
                    Kind::F90Real { p, r }
                } else {
                    Kind::F90Complex { p, r }
                }
            }
            Combiner::F90Integer => Kind::F90Integer {
                r: self.int("a range", w)?,
            },
            Combiner::Dup => Kind::Dup(child(self)?),
            Combiner::Contiguous => Kind::Contiguous {
                count: self.int("a count", w)?,
                old: child(self)?,
            },
            Combiner::Vector | Combiner::Hvector | Combiner::HvectorInteger => {
                let count = self.int("a count", w)?;
                let blocklength = self.int("a blocklength", w)?;
                let stride = self.int("a stride", w)?;
                let old = child(self)?;
                if combiner == Combiner::Vector {
                    Kind::Vector {
                        count,
                        blocklength,
                        stride,
                        old,
                    }
                } else {
                    Kind::Hvector {
                        count,
                        blocklength,
                        stride,
                        old,
                        legacy: combiner == Combiner::HvectorInteger,
                    }
                }
            }
            Combiner::Indexed | Combiner::Hindexed | Combiner::HindexedInteger | Combiner::Struct | Combiner::StructInteger => {
                let is_struct = matches!(combiner, Combiner::Struct | Combiner::StructInteger);
                let per_item = 2 * if w { 8 } else { 4 } + if is_struct { CHILD } else { 0 };
                let n = self.len("a count", w, per_item)?;
                let blocklengths = self.ints("blocklengths", w, n)?;
                let displacements = self.ints("displacements", w, n)?;
                match combiner {
                    Combiner::Indexed => Kind::Indexed {
                        blocklengths,
                        displacements,
                        old: child(self)?,
                    },
                    Combiner::Hindexed | Combiner::HindexedInteger => Kind::Hindexed {
                        blocklengths,
                        displacements,
                        old: child(self)?,
                        legacy: combiner == Combiner::HindexedInteger,
                    },
                    _ => {
                        let mut types = Vec::with_capacity(n);
                        for _ in 0..n {
                            types.push(self.node(depth + 1)?);
                        }
                        Kind::Struct {
                            blocklengths,
                            displacements,
                            types,
                            legacy: combiner == Combiner::StructInteger,
                        }
                    }
                }
            }
            Combiner::IndexedBlock | Combiner::HindexedBlock => {
                let n = self.len("a count", w, if w { 8 } else { 4 })?;
                let blocklength = self.int("a blocklength", w)?;
                let displacements = self.ints("displacements", w, n)?;
                let old = child(self)?;
                if combiner == Combiner::IndexedBlock {
                    Kind::IndexedBlock {
                        blocklength,
                        displacements,
                        old,
                    }
                } else {
                    Kind::HindexedBlock {
                        blocklength,
                        displacements,
                        old,
                    }
                }
            }
            Combiner::Subarray => {
                let n = self.len("ndims", w, 3 * if w { 8 } else { 4 })?;
                let sizes = self.ints("sizes", w, n)?;
                let subsizes = self.ints("subsizes", w, n)?;
                let starts = self.ints("starts", w, n)?;
                let order = self.order(w)?;
                Kind::Subarray {
                    sizes,
                    subsizes,
                    starts,
                    order,
                    old: child(self)?,
                }
            }
            Combiner::Darray => {
                let size = self.int("a size", w)?;
                let rank = self.int("a rank", w)?;
                let n = self.len("ndims", w, 4 * if w { 8 } else { 4 })?;
                let gsizes = self.ints("gsizes", w, n)?;
                let mut distribs = Vec::with_capacity(n);
                for _ in 0..n {
                    let at = self.pos;
                    let d = self.int("a distribution", w)?;
                    distribs.push(
                        Distribution::from_code(d)
                            .ok_or_else(|| Error::corrupt(at, format!("unknown distribution code {d}")))?,
                    );
                }
                let dargs = self.ints("dargs", w, n)?;
                let psizes = self.ints("psizes", w, n)?;
                let order = self.order(w)?;
                Kind::Darray {
                    size,
                    rank,
                    gsizes,
                    distribs,
                    dargs,
                    psizes,
                    order,
                    old: child(self)?,
                }
            }
            Combiner::Resized => Kind::Resized {
                lb: self.int("a lower bound", w)?,
                extent: self.int("an extent", w)?,
                old: child(self)?,
            },
            Combiner::ValueIndex => Kind::ValueIndex {
                value: child(self)?,
                index: child(self)?,
            },
        };
        let node = Node { name, large, kind };
        // One encoding per tree: WIDE exactly when a field needs 64 bits.
        let needs_wide = super::write::int_fields(&node).iter().any(|&v| i32::try_from(v).is_err());
        if wide != needs_wide {
            return Err(Error::corrupt(
                fields_at,
                if wide {
                    "the wide flag is set but every field fits 32 bits"
                } else {
                    "the wide flag is clear but a field needs 64 bits"
                },
            ));
        }
        Ok(node)
    }

    fn order(&mut self, wide: bool) -> Result<Order> {
        let at = self.pos;
        let o = self.int("an order", wide)?;
        Order::from_code(o).ok_or_else(|| Error::corrupt(at, format!("unknown order code {o}")))
    }
}
