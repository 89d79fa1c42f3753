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

pub const VERSION: u8 = 1;
pub const REFERENCE_MAGIC: [u8; 4] = *b"MXTR";
pub const DEFINITION_MAGIC: [u8; 4] = *b"MXTD";
pub const BCAST_MAGIC: [u8; 4] = *b"MXTB";
pub const REFERENCE_LEN: usize = 32;
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

/// A reference: the data message every send makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reference {
    /// The sequence number of the definition that made the entry.
    pub seq: u64,
    pub id: Id,
}

impl Reference {
    pub fn encode(&self) -> [u8; REFERENCE_LEN] {
        let mut b = [0u8; REFERENCE_LEN];
        b[..4].copy_from_slice(&REFERENCE_MAGIC);
        b[4] = VERSION;
        b[5] = 1;
        b[8..16].copy_from_slice(&self.seq.to_be_bytes());
        b[16..32].copy_from_slice(&self.id);
        b
    }

    pub fn decode(b: &[u8]) -> Result<Reference> {
        check_head(b, REFERENCE_MAGIC, REFERENCE_LEN, "reference")?;
        if b.len() != REFERENCE_LEN {
            return Err(Error::Exchange(format!(
                "a reference message of {} bytes (it has {REFERENCE_LEN})",
                b.len()
            )));
        }
        if b[5] != 1 {
            return Err(exchange_error(
                5,
                format!("kind {} (a reference is 1)", b[5]),
            ));
        }
        check_zero(b, 6, 8)?;
        let seq = u64_at(b, 8);
        if seq == 0 {
            return Err(exchange_error(8, "sequence number 0 (they start at 1)"));
        }
        Ok(Reference {
            seq,
            id: id_at(b, 16),
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
        let r = Reference {
            seq: 7,
            id: [3; 16],
        };
        let b = r.encode();
        assert_eq!(Reference::decode(&b).unwrap(), r);
        for i in [0, 4, 5, 6, 8 + 7] {
            let mut bad = b;
            bad[i] ^= if i == 15 { 7 } else { 1 };
            assert!(Reference::decode(&bad).is_err(), "byte {i}");
        }
        assert!(Reference::decode(&b[..31]).is_err());
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
