//! The exchange's messages, byte for byte (spec/exchange.md): encoding and
//! a strict decoding of each, no MPI. Every number is big-endian.

use crate::error::{Error, Result};
use crate::format::Representation;
use sha2::{Digest, Sha256};

/// A type's identifier: the first 16 bytes of the SHA-256 of its external
/// stream.
pub type Id = [u8; 16];

pub fn digest(external: &[u8]) -> Id {
    let full = Sha256::digest(external);
    let mut id = [0u8; 16];
    id.copy_from_slice(&full[..16]);
    id
}

/// Version 2: references shrank to 16 bytes (version 1's were 32).
pub const VERSION: u8 = 2;
pub const REFERENCE_MAGIC: [u8; 2] = *b"MR";
pub const DEFINITION_MAGIC: [u8; 4] = *b"MXTD";
pub const BCAST_MAGIC: [u8; 4] = *b"MXTB";
pub const REFERENCE_LEN: usize = 16;
/// The largest entry number a reference can name.
pub const MAX_SEQ: u64 = u32::MAX as u64;
pub const DEFINITION_HEADER_LEN: usize = 48;
pub const BCAST_LEN: usize = 48;

/// The representation codes of a definition's payload.
pub fn rep_code(rep: Representation) -> u8 {
    match rep {
        Representation::External => 1,
        Representation::Internal => 2,
        Representation::Compressed => 3,
    }
}

fn rep_of(code: u8, at: usize) -> Result<Representation> {
    match code {
        1 => Ok(Representation::External),
        2 => Ok(Representation::Internal),
        3 => Ok(Representation::Compressed),
        c => Err(exchange_error(
            at,
            format!("representation code {c} is not 1, 2 or 3"),
        )),
    }
}

pub fn exchange_error(offset: usize, what: impl std::fmt::Display) -> Error {
    Error::Exchange(format!("message byte {offset}: {what}"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn id_at(b: &[u8], at: usize) -> Id {
    b[at..at + 16].try_into().expect("16 bytes")
}

fn check_head(b: &[u8], magic: [u8; 4], len: usize, what: &str) -> Result<()> {
    if b.len() < len {
        return Err(Error::Exchange(format!(
            "a {what} message of {} bytes, shorter than its {len}-byte header",
            b.len()
        )));
    }
    if b[..4] != magic {
        return Err(exchange_error(
            0,
            format!(
                "not a {what} message of the type exchange (magic {:02x?})",
                &b[..4]
            ),
        ));
    }
    if b[4] != VERSION {
        return Err(exchange_error(
            4,
            format!("version {} (this library reads {VERSION})", b[4]),
        ));
    }
    Ok(())
}

fn check_zero(b: &[u8], from: usize, to: usize) -> Result<()> {
    match b[from..to].iter().position(|&x| x != 0) {
        Some(i) => Err(exchange_error(from + i, "a reserved byte is not 0")),
        None => Ok(()),
    }
}

/// A reference: the data message every send makes, and what
/// `MPIX_Type_reference` hands the caller to put in its own message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reference {
    /// The sequence number of the definition that made the entry (1 to
    /// `MAX_SEQ`).
    pub seq: u64,
    /// The first 8 bytes of the entry's identifier: what makes a forged
    /// or stale reference fail (the definition carries all 16).
    pub check: [u8; 8],
}

impl Reference {
    pub fn new(seq: u64, id: &Id) -> Reference {
        Reference {
            seq,
            check: id[..8].try_into().expect("8 bytes"),
        }
    }

    /// Whether the reference names an entry with identifier `id`.
    pub fn matches(&self, id: &Id) -> bool {
        self.check[..] == id[..8]
    }

    pub fn encode(&self) -> [u8; REFERENCE_LEN] {
        debug_assert!((1..=MAX_SEQ).contains(&self.seq));
        let mut b = [0u8; REFERENCE_LEN];
        b[..2].copy_from_slice(&REFERENCE_MAGIC);
        b[2] = VERSION;
        b[4..8].copy_from_slice(&(self.seq as u32).to_be_bytes());
        b[8..16].copy_from_slice(&self.check);
        b
    }

    pub fn decode(b: &[u8]) -> Result<Reference> {
        if b.len() != REFERENCE_LEN {
            return Err(Error::Exchange(format!(
                "a reference of {} bytes (it has {REFERENCE_LEN})",
                b.len()
            )));
        }
        if b[..2] != REFERENCE_MAGIC {
            return Err(exchange_error(
                0,
                format!(
                    "not a reference of the type exchange (magic {:02x?})",
                    &b[..2]
                ),
            ));
        }
        if b[2] != VERSION {
            return Err(exchange_error(
                2,
                format!("version {} (this library reads {VERSION})", b[2]),
            ));
        }
        check_zero(b, 3, 4)?;
        let seq = u32::from_be_bytes(b[4..8].try_into().expect("4 bytes")) as u64;
        if seq == 0 {
            return Err(exchange_error(4, "entry number 0 (they start at 1)"));
        }
        Ok(Reference {
            seq,
            check: b[8..16].try_into().expect("8 bytes"),
        })
    }
}

/// A definition: the description of a new entry, on the definitions
/// channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition<'a> {
    pub rep: Representation,
    pub seq: u64,
    /// The entry evicted to make room (its sequence number), 0 for none.
    pub evict: u64,
    /// How many references to the evicted entry were sent, in all.
    pub evict_refs: u64,
    pub id: Id,
    pub payload: &'a [u8],
}

impl Definition<'_> {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(DEFINITION_HEADER_LEN + self.payload.len());
        b.extend_from_slice(&DEFINITION_MAGIC);
        b.push(VERSION);
        b.push(rep_code(self.rep));
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&self.seq.to_be_bytes());
        b.extend_from_slice(&self.evict.to_be_bytes());
        b.extend_from_slice(&self.evict_refs.to_be_bytes());
        b.extend_from_slice(&self.id);
        b.extend_from_slice(self.payload);
        b
    }

    pub fn decode(b: &[u8]) -> Result<Definition<'_>> {
        check_head(b, DEFINITION_MAGIC, DEFINITION_HEADER_LEN, "definition")?;
        let rep = rep_of(b[5], 5)?;
        check_zero(b, 6, 8)?;
        let seq = u64_at(b, 8);
        if seq == 0 {
            return Err(exchange_error(8, "sequence number 0 (they start at 1)"));
        }
        let evict = u64_at(b, 16);
        let evict_refs = u64_at(b, 24);
        if evict >= seq {
            return Err(exchange_error(
                16,
                format!("entry {seq} evicts entry {evict}, not an earlier one"),
            ));
        }
        if evict == 0 && evict_refs != 0 {
            return Err(exchange_error(
                24,
                "references counted for no evicted entry",
            ));
        }
        if evict != 0 && evict_refs == 0 {
            return Err(exchange_error(
                24,
                "an evicted entry that was never referenced",
            ));
        }
        let payload = &b[DEFINITION_HEADER_LEN..];
        if payload.is_empty() {
            return Err(exchange_error(
                DEFINITION_HEADER_LEN,
                "an empty description",
            ));
        }
        Ok(Definition {
            rep,
            seq,
            evict,
            evict_refs,
            id: id_at(b, 32),
            payload,
        })
    }
}

/// A broadcast's header; a definition's payload follows in a second
/// broadcast of `len` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bcast {
    /// None for a reference, else the payload's representation.
    pub rep: Option<Representation>,
    pub seq: u64,
    pub evict: u64,
    pub len: u64,
    pub id: Id,
}

impl Bcast {
    pub fn encode(&self) -> [u8; BCAST_LEN] {
        let mut b = [0u8; BCAST_LEN];
        b[..4].copy_from_slice(&BCAST_MAGIC);
        b[4] = VERSION;
        b[5] = if self.rep.is_some() { 2 } else { 1 };
        b[6] = self.rep.map_or(0, rep_code);
        b[8..16].copy_from_slice(&self.seq.to_be_bytes());
        b[16..24].copy_from_slice(&self.evict.to_be_bytes());
        b[24..32].copy_from_slice(&self.len.to_be_bytes());
        b[32..48].copy_from_slice(&self.id);
        b
    }

    pub fn decode(b: &[u8]) -> Result<Bcast> {
        check_head(b, BCAST_MAGIC, BCAST_LEN, "broadcast")?;
        let rep = match b[5] {
            1 => {
                if b[6] != 0 {
                    return Err(exchange_error(6, "a representation in a reference"));
                }
                None
            }
            2 => Some(rep_of(b[6], 6)?),
            k => {
                return Err(exchange_error(
                    5,
                    format!("kind {k} (1 reference, 2 definition)"),
                ))
            }
        };
        check_zero(b, 7, 8)?;
        let seq = u64_at(b, 8);
        let evict = u64_at(b, 16);
        let len = u64_at(b, 24);
        if seq == 0 {
            return Err(exchange_error(8, "sequence number 0 (they start at 1)"));
        }
        match rep {
            None if evict != 0 || len != 0 => {
                return Err(exchange_error(
                    16,
                    "a reference with an eviction or a payload",
                ))
            }
            Some(_) if len == 0 => return Err(exchange_error(24, "an empty description")),
            Some(_) if evict >= seq => {
                return Err(exchange_error(
                    16,
                    format!("entry {seq} evicts entry {evict}, not an earlier one"),
                ))
            }
            _ => {}
        }
        Ok(Bcast {
            rep,
            seq,
            evict,
            len,
            id: id_at(b, 32),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_reject_forgeries() {
        let r = Reference::new(7, &[3; 16]);
        let b = r.encode();
        assert_eq!(
            b,
            [0x4d, 0x52, 2, 0, 0, 0, 0, 7, 3, 3, 3, 3, 3, 3, 3, 3],
            "spec/exchange.md §4"
        );
        assert_eq!(Reference::decode(&b).unwrap(), r);
        assert!(r.matches(&[3; 16]) && !r.matches(&[4; 16]));
        for i in [0, 1, 2, 3] {
            let mut bad = b;
            bad[i] ^= 1;
            assert!(Reference::decode(&bad).is_err(), "byte {i}");
        }
        let mut zero = b;
        zero[7] = 0;
        assert!(Reference::decode(&zero).is_err(), "entry 0");
        assert!(Reference::decode(&b[..15]).is_err());
        assert!(Reference::decode(&[0; 17]).is_err());
        let d = Definition {
            rep: Representation::Internal,
            seq: 3,
            evict: 1,
            evict_refs: 2,
            id: [9; 16],
            payload: b"abc",
        };
        let e = d.encode();
        assert_eq!(Definition::decode(&e).unwrap(), d);
        assert!(Definition::decode(&e[..48]).is_err());
        let mut bad = e.clone();
        bad[5] = 4;
        assert!(Definition::decode(&bad).is_err());
        let c = Bcast {
            rep: Some(Representation::Compressed),
            seq: 2,
            evict: 1,
            len: 10,
            id: [1; 16],
        };
        assert_eq!(Bcast::decode(&c.encode()).unwrap(), c);
    }
}
