//! Type signatures as the checks compare them: a type's signature hash
//! (cached per type handle until a type is freed), its description, and
//! the first difference between two signatures with the tree paths of
//! both sides (by the marshalled types the ranks exchange).

use crate::mpi;
use crate::record::*;
use crate::report::json_str;
use crate::sys::MPI_Datatype;
use mpix_marshal::{HashKind, Representation};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

pub(crate) fn packed_hash() -> u64 {
    static H: OnceLock<u64> = OnceLock::new();
    *H.get_or_init(|| mpix_marshal::signature_hash(mpi::packed(), HashKind::DEFAULT).unwrap_or(0))
}

/// A type's signature facts, looked up once per call: its hash, element
/// count and size (O(1) once the library has cached the hash on the type).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TypeSig {
    /// None: the library could not read the type.
    hash: Option<(u64, u128)>,
    bytes: u64,
    packed: bool,
}

/// Bumped by every `MPI_Type_free`: a freed handle may come back as
/// another type, so the per-thread caches of type signatures start over.
pub static TYPES_FREED: AtomicU64 = AtomicU64::new(0);

/// Bumped by every `MPI_Type_set_name`: a type-exchange reference kept
/// for a type (`crate::p2p`'s batches) describes its old name, so the
/// next message makes a new one.
pub static TYPES_RENAMED: AtomicU64 = AtomicU64::new(0);

/// The frees and renames of types so far: a kept reference to a type is
/// good while this is unchanged.
pub(crate) fn type_changes() -> u64 {
    TYPES_FREED.load(Ordering::Acquire) + TYPES_RENAMED.load(Ordering::Acquire)
}

thread_local! {
    /// The frees this thread made as the checker's or the library's own
    /// calls (`crate::internal`), of the `TYPES_FREED` count.
    static OWN_FREES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts one of this thread's own frees (see `OWN_FREES`).
pub(crate) fn count_own_free() {
    OWN_FREES.with(|c| c.set(c.get() + 1));
}

/// `TYPES_FREED`, and this thread's own frees of it.
pub(crate) fn frees() -> (u64, u64) {
    (
        TYPES_FREED.load(Ordering::Acquire),
        OWN_FREES.with(|c| c.get()),
    )
}

/// A recent type: its facts and the signature of the count it was last
/// used with (programs repeat a call with the same count).
#[derive(Clone, Copy)]
pub(crate) struct Recent {
    key: u64,
    facts: TypeSig,
    last: Option<(i64, Sig)>,
}

thread_local! {
    /// The last few types, valid while no type was freed.
    static RECENT: std::cell::RefCell<(u64, Vec<Recent>)> =
        const { std::cell::RefCell::new((0, Vec::new())) };
}

impl TypeSig {
    fn look_up(t: MPI_Datatype) -> TypeSig {
        let kind = HashKind::DEFAULT;
        let hash = match (
            mpix_marshal::signature_hash(t, kind),
            mpix_marshal::signature_count(t),
        ) {
            (Ok(h), Ok(n)) => Some((h, n)),
            _ => None,
        };
        let packed = hash.is_some_and(|(h, n)| n > 0 && h == kind.repeat((packed_hash(), 1), n));
        TypeSig {
            hash,
            bytes: mpi::type_size(t),
            packed,
        }
    }

    /// The signature of `count` copies: O(log count) at most.
    fn times(&self, count: i64) -> Sig {
        let (Some((h, n)), Ok(k)) = (self.hash, u64::try_from(count)) else {
            return Sig {
                flags: DEFINED | UNKNOWN,
                ..Sig::NONE
            };
        };
        let k = k as u128;
        Sig {
            hash: if k == 1 {
                h
            } else {
                HashKind::DEFAULT.repeat((h, n), k)
            },
            count: u64::try_from(n.saturating_mul(k)).unwrap_or(u64::MAX),
            bytes: self.bytes.saturating_mul(k as u64),
            flags: DEFINED | if self.packed { PACKED } else { 0 },
        }
    }
}

/// The signature of `count` copies of `t`: from this thread's cache of
/// recent types (a handful of comparisons) when `t` was used lately, else
/// from the library (O(1) once it has the type's hash, which it keeps on
/// the type) and O(log count) for the copies.
pub fn sig_of(count: i64, t: MPI_Datatype) -> Sig {
    const KEEP: usize = 8;
    let key = mpi::bits(t);
    let freed = TYPES_FREED.load(Ordering::Acquire);
    RECENT.with(|r| {
        let mut r = r.borrow_mut();
        if r.0 != freed {
            *r = (freed, Vec::new());
        }
        let i = match r.1.iter().position(|e| e.key == key) {
            Some(i) => i,
            None => {
                if r.1.len() == KEEP {
                    r.1.remove(0);
                }
                r.1.push(Recent {
                    key,
                    facts: TypeSig::look_up(t),
                    last: None,
                });
                r.1.len() - 1
            }
        };
        let e = &mut r.1[i];
        match e.last {
            Some((c, s)) if c == count => s,
            _ => {
                let s = e.facts.times(count);
                e.last = Some((count, s));
                s
            }
        }
    })
}

/// "4 x MPI_BYTE", "1 x a derived datatype "row" (MPI_COMBINER_VECTOR)".
pub fn describe(count: i64, t: MPI_Datatype) -> String {
    let what = match mpix_marshal::type_tree(t) {
        Ok(node) => match &node.kind {
            mpix_marshal::Kind::Named(p) => p.mpi_name().to_string(),
            _ => {
                let name = node
                    .name
                    .as_ref()
                    .map(|n| format!("\"{}\" ", String::from_utf8_lossy(n)))
                    .unwrap_or_default();
                format!("a derived datatype {name}({})", node.combiner().mpi_name())
            }
        },
        Err(e) => format!("a datatype the checker cannot read ({e})"),
    };
    format!("{count} x {what}")
}

pub(crate) fn sig_text(count: i64, t: MPI_Datatype, s: &Sig) -> String {
    let el = if s.count == 1 { "element" } else { "elements" };
    format!(
        "{}: {} {el}, {} bytes",
        describe(count, t),
        s.count,
        s.bytes
    )
}

pub(crate) fn sig_text_remote(s: &Sig) -> String {
    let el = if s.count == 1 { "element" } else { "elements" };
    format!("{} {el}, {} bytes", s.count, s.bytes)
}

/// (count, type) marshalled for another rank.
pub(crate) fn pack_type(count: i64, t: MPI_Datatype) -> Vec<u8> {
    let mut out = count.to_le_bytes().to_vec();
    if let Ok(bytes) = mpix_marshal::marshal(Representation::External, t) {
        out.extend_from_slice(&bytes);
    }
    out
}

/// Where the signatures of (ref_count, ref_type) and (count, t) first
/// differ, as report lines naming each side.
pub fn difference_lines(
    first: (&str, i64, MPI_Datatype),
    second: (&str, i64, MPI_Datatype),
) -> (Vec<String>, Vec<(&'static str, String)>) {
    let (a, a_owned) = mpi::contiguous(first.1, first.2);
    let (b, b_owned) = mpi::contiguous(second.1, second.2);
    let diff = mpix_marshal::signature_difference(a, b);
    if a_owned {
        mpi::free_type(a);
    }
    if b_owned {
        mpi::free_type(b);
    }
    match diff {
        Ok(Some(d)) => {
            let first_path = count_path(&d.first_path, first.1, a_owned);
            let second_path = count_path(&d.second_path, second.1, b_owned);
            let fields = vec![
                ("element", d.index.to_string()),
                ("first_type", json_str(&d.first)),
                ("second_type", json_str(&d.second)),
                ("first_path", json_str(&first_path)),
                ("second_path", json_str(&second_path)),
            ];
            (
                vec![
                    format!("first difference at element {} of the signatures:", d.index),
                    format!("  {} has {} at {}", first.0, d.first, first_path),
                    format!("  {} has {} at {}", second.0, d.second, second_path),
                ],
                fields,
            )
        }
        Ok(None) => (
            vec![
                "the signatures are equal element by element: only MPI_PACKED's byte counts differ"
                    .into(),
            ],
            vec![],
        ),
        Err(e) => (
            vec![format!("the signatures could not be compared: {e}")],
            vec![],
        ),
    }
}

/// A path the library located in `count` copies of a type (`wrapped`: the
/// copies were made one contiguous type for the comparison) in the
/// argument's own terms: the copy of the count, then the path inside the
/// type from its top level; no synthetic contiguous level, and no "root"
/// (a collective's root is a rank). "element 3 of 4 x MPI_BYTE", "copy 1
/// of 2 x the type > MPI_COMBINER_STRUCT member 1, copy 0 > MPI_DOUBLE",
/// "MPI_COMBINER_VECTOR block 2, element 0 > MPI_INT" (a count of 1).
pub(crate) fn count_path(path: &str, count: i64, wrapped: bool) -> String {
    let inner = path.strip_prefix("root ").unwrap_or(path);
    let (copy, inner) = if wrapped {
        match inner
            .strip_prefix("MPI_COMBINER_CONTIGUOUS copy ")
            .and_then(|r| r.split_once(" > "))
        {
            Some((k, rest)) => (k.to_string(), rest),
            None => return inner.to_string(),
        }
    } else {
        ("0".to_string(), inner)
    };
    if inner.contains(" > ") || inner.starts_with("MPI_COMBINER_") {
        if wrapped {
            format!("copy {copy} of {count} x the type > {inner}")
        } else {
            inner.to_string()
        }
    } else {
        // A predefined type: its copies are the count's elements.
        format!("element {copy} of {count} x {inner}")
    }
}

/// Rebuilds a (count, type) another rank marshalled; the caller frees the
/// type when `owned`.
pub(crate) fn unpack_type(bytes: &[u8]) -> Option<(i64, MPI_Datatype, bool)> {
    let count = i64::from_le_bytes(bytes.get(..8)?.try_into().ok()?);
    let t = mpix_marshal::unmarshal(Representation::External, &bytes[8..]).ok()?;
    let owned = !mpi::is_named(t);
    Some((count, t, owned))
}
