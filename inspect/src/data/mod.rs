//! `dump --data`: the values of a data file read through the archived
//! type, element by element, as `h5dump -d` prints a dataset. The file
//! holds copies of the type as an MPI-IO file view with the type as its
//! filetype places them: copy k at `offset + k × extent`, each element at
//! its typemap displacement in that copy (the typemap comes from `draw`'s
//! structure, the extents from the local MPI), its bytes in the data
//! representation given (`values`).

pub mod path;
pub mod values;

use crate::draw::layout::{Builder, Shape};
use crate::error::{Error, Result};
use crate::input::Stream;
use crate::mpi;
use mpix_marshal::testing::signature::{basic_types, BasicType};
use mpix_marshal::{Node, Predefined};
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::Path;
use values::{Class, Datarep, Decoded};

/// What part of the data file to read, and how.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The byte where copy 0 starts (the file view's displacement).
    pub offset: u64,
    /// Print at most this many elements.
    pub count: Option<u64>,
    pub rep: Datarep,
}

/// One element read.
#[derive(Debug, Clone, PartialEq)]
pub struct Element {
    /// Its position: "[3] > member 1 > [2]".
    pub path: String,
    /// Its type's MPI name.
    pub type_name: String,
    /// Its first byte in the data file.
    pub offset: u64,
    /// Its value; two for a pair type (MPI_DOUBLE_INT: the double, the int).
    pub values: Vec<Decoded>,
}

/// How one basic type reads: its parts (one, or two for a pair type), each
/// (byte offset in the element, size, class).
type Parts = Vec<(usize, usize, Class)>;

/// The parts of each predefined type met, worked out once.
struct Decoders {
    rep: Datarep,
    seen: HashMap<Predefined, std::result::Result<Parts, String>>,
}

impl Decoders {
    fn parts(&mut self, elem: &Shape) -> std::result::Result<Parts, String> {
        let Shape::Elem { label, size, basic } = elem else {
            return Err("not an element".into());
        };
        let Some(p) = basic else {
            // Fortran kinds and value-index types: bytes, natively only.
            return match self.rep {
                Datarep::External32 => Err(format!(
                    "{label} has no external32 size in the MPI standard's table"
                )),
                Datarep::Native => Ok(vec![(0, *size as usize, Class::Bytes)]),
            };
        };
        let rep = self.rep;
        self.seen
            .entry(*p)
            .or_insert_with(|| parts_of(*p, rep))
            .clone()
    }
}

/// The parts of predefined type `p` in representation `rep`; an error when
/// its external32 size is not this machine's (the file's displacements
/// then differ from the local typemap's).
fn parts_of(p: Predefined, rep: Datarep) -> std::result::Result<Parts, String> {
    let basics = basic_types(p).map_err(|e| e.to_string())?;
    let mut parts = Vec::new();
    let mut at = 0usize;
    for b in basics.as_slice() {
        let BasicType::Predefined(q) = b else {
            return Err(format!("{} holds a Fortran kind", p.mpi_name()));
        };
        let native = mpi::extents(&Node::named(*q))
            .map_err(|e| e.to_string())?
            .size as usize;
        let (class, e32) = values::class(q.mpi_name());
        if rep == Datarep::External32 && e32 != native {
            return Err(format!(
                "{} is {e32} bytes in external32 but {native} bytes here: the data file's \
                 displacements are then not this machine's typemap, which dump --data reads \
                 (read the file with --datarep native on a machine where the sizes agree, or \
                 write it in native)",
                q.mpi_name()
            ));
        }
        // The second of a pair starts at its own alignment after the first
        // (MPI_SHORT_INT's int at 4, MPI_DOUBLE_INT's at 8).
        if native > 0 {
            at = at.div_ceil(native) * native;
        }
        parts.push((at, native, class));
        at += native;
    }
    Ok(parts)
}

/// Why reading stopped early.
#[derive(Debug)]
pub enum Stop {
    /// The data file ends inside an element.
    Short { offset: i128, end: i128, len: u64 },
    /// The element lies before the file's start.
    BeforeStart { offset: i128 },
    /// The type cannot be read in this representation.
    Unreadable(String),
    /// The caller's error (writing the output).
    Caller(Error),
    /// `count` elements were read.
    Enough,
}

/// Reads the elements of `data` (the file `data_path`) through the type of
/// `s`, calling `f` with each in order: copies of the type while the
/// file has data for their first byte, until `opt.count` elements.
pub fn read(
    s: &Stream,
    data: &[u8],
    data_path: &Path,
    opt: Options,
    f: &mut dyn FnMut(Element) -> Result<()>,
) -> Result<()> {
    let fail = |source| Error::Stream {
        path: s.path.clone(),
        source,
    };
    let mut b = Builder::default();
    let shape = b.shape(&s.tree).map_err(fail)?;
    let e = b.extents(&s.tree).map_err(fail)?;
    let mut decoders = Decoders {
        rep: opt.rep,
        seen: HashMap::new(),
    };
    let mut locator = path::Locator::new(&s.tree);
    let len = data.len() as u64;
    let mut left = opt.count.unwrap_or(u64::MAX);
    let mut copy: i128 = 0;
    let stop = loop {
        let origin = i128::from(opt.offset) + copy * i128::from(e.extent);
        // A copy is read when its first data byte is in the file.
        if left == 0
            || (copy > 0 && (e.extent <= 0 || origin + i128::from(e.true_lb) >= len as i128))
        {
            break None;
        }
        if copy == 0 && origin + i128::from(e.true_lb) >= len as i128 && e.size > 0 {
            break Some(Stop::Short {
                offset: origin + i128::from(e.true_lb),
                end: origin + i128::from(e.true_lb + e.size.max(1)),
                len,
            });
        }
        let mut index: u128 = 0;
        let flow = shape.for_each_elem(0, &mut |disp, elem| {
            let at = origin + i128::from(disp);
            let parts = match decoders.parts(elem) {
                Ok(p) => p,
                Err(m) => return ControlFlow::Break(Stop::Unreadable(m)),
            };
            let size = parts.last().map_or(0, |(o, n, _)| o + n) as i128;
            if at < 0 {
                return ControlFlow::Break(Stop::BeforeStart { offset: at });
            }
            if at + size > len as i128 {
                return ControlFlow::Break(Stop::Short {
                    offset: at,
                    end: at + size,
                    len,
                });
            }
            let (steps, n) = match locator.path(index) {
                Ok(x) => x,
                Err(e) => return ControlFlow::Break(Stop::Unreadable(e.to_string())),
            };
            index += n.max(1);
            let bytes = &data[at as usize..(at + size) as usize];
            let values = parts
                .iter()
                .map(|(o, n, c)| values::decode(*c, &bytes[*o..o + n], opt.rep))
                .collect();
            let mut path = format!("[{copy}]");
            for st in steps {
                path.push_str(" > ");
                path.push_str(&st);
            }
            let Shape::Elem { label, .. } = elem else {
                return ControlFlow::Continue(());
            };
            if let Err(e) = f(Element {
                path,
                type_name: label.clone(),
                offset: at as u64,
                values,
            }) {
                return ControlFlow::Break(Stop::Caller(e));
            }
            left -= 1;
            if left == 0 {
                return ControlFlow::Break(Stop::Enough);
            }
            ControlFlow::Continue(())
        });
        match flow {
            ControlFlow::Continue(()) => copy += 1,
            ControlFlow::Break(Stop::Enough) => break None,
            ControlFlow::Break(s) => break Some(s),
        }
    };
    match stop {
        None | Some(Stop::Enough) => Ok(()),
        Some(Stop::Caller(e)) => Err(e),
        Some(Stop::Short { offset, end, len }) => Err(Error::Data {
            path: data_path.to_path_buf(),
            what: format!(
                "the data ends at byte {len}, inside the element at bytes {offset}..{end}"
            ),
        }),
        Some(Stop::BeforeStart { offset }) => Err(Error::Data {
            path: data_path.to_path_buf(),
            what: format!(
                "an element starts at byte {offset}, before the file's start (the type's lower \
                 bound is negative: give --offset)"
            ),
        }),
        Some(Stop::Unreadable(what)) => Err(Error::Data {
            path: data_path.to_path_buf(),
            what,
        }),
    }
}

/// An element as a text line: "[3] > member 1 > [2]: MPI_DOUBLE 34.0".
pub fn line(e: &Element) -> String {
    let v: Vec<String> = e.values.iter().map(ToString::to_string).collect();
    let value = if v.len() == 1 {
        v[0].clone()
    } else {
        format!("({})", v.join(", "))
    };
    format!("{}: {} {value}\n", e.path, e.type_name)
}

/// An element as a JSON object.
pub fn json(e: &Element) -> serde_json::Value {
    use serde_json::json;
    let one = |d: &Decoded| match d {
        Decoded::Int(v) => i64::try_from(*v).map_or_else(|_| json!(v.to_string()), |x| json!(x)),
        Decoded::Uint(v) => u64::try_from(*v).map_or_else(|_| json!(v.to_string()), |x| json!(x)),
        Decoded::Float(v) if v.is_finite() => json!(v),
        Decoded::Float(v) => json!(v.to_string()),
        Decoded::Complex(a, b) => json!([a, b]),
        Decoded::Bool(b) => json!(b),
        Decoded::Char(c) => json!(c),
        Decoded::Hex(b) => json!(values::hex(b)),
    };
    let value = match e.values.as_slice() {
        [d] => one(d),
        many => serde_json::Value::Array(many.iter().map(one).collect()),
    };
    json!({"path": e.path, "type": e.type_name, "offset": e.offset, "value": value})
}
