//! `diff A B`: the five-level comparison of `MPIX_Type_compare`, both
//! types rebuilt on the local MPI, with the first difference explained.
//! Attributes whose keyvals nobody registered in this process are not set
//! on the rebuilt types, so at the attributes level the two streams' own
//! attributes are compared as well.

use crate::cli::CompareLevel;
use crate::error::{Error, Result};
use crate::input::Stream;
use crate::mpi;
use mpix_marshal::{Level, Node};

pub fn level(l: CompareLevel) -> Level {
    match l {
        CompareLevel::Signature => Level::Signature,
        CompareLevel::Typemap => Level::Typemap,
        CompareLevel::Constructor => Level::Constructor,
        CompareLevel::Names => Level::Names,
        CompareLevel::Attributes => Level::Attributes,
    }
}

/// The comparison's report: None when equal, else the explanation.
pub fn compare(a: &Stream, b: &Stream, level: Level) -> Result<Option<String>> {
    let c = mpi::compare(&a.tree, &b.tree, level).map_err(|e| match e {
        mpix_marshal::Error::Unsupported(_) | mpix_marshal::Error::InvalidArgument(_) => {
            Error::Mpi(format!(
                "the types of {} and {} cannot both be rebuilt on this MPI to compare them: {e}",
                a.path.display(),
                b.path.display()
            ))
        }
        e => Error::Library(e),
    })?;
    if c.differs_at.is_some() {
        return Ok(Some(c.explanation));
    }
    if level >= Level::Attributes {
        if let Some(d) = attribute_difference(&a.tree, &b.tree, &mut "root".to_string()) {
            return Ok(Some(format!("attributes level: {d}")));
        }
    }
    Ok(None)
}

/// The first difference of the two trees' marshalled attributes in
/// pre-order (the trees are equal at the constructor level here).
fn attribute_difference(a: &Node, b: &Node, path: &mut String) -> Option<String> {
    if a.attrs != b.attrs {
        let names = |n: &Node| {
            n.attrs
                .iter()
                .map(|x| {
                    format!(
                        "{:?} ({} bytes)",
                        String::from_utf8_lossy(&x.name),
                        x.value.len()
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let show = |s: String| if s.is_empty() { "none".to_string() } else { s };
        return Some(format!(
            "at {path}: attributes {} vs {}",
            show(names(a)),
            show(names(b))
        ));
    }
    for (i, (x, y)) in a.children().iter().zip(b.children()).enumerate() {
        let len = path.len();
        path.push_str(&format!(" > {} {i}", x.combiner().mpi_name()));
        if let Some(d) = attribute_difference(x, y, path) {
            return Some(d);
        }
        path.truncate(len);
    }
    None
}
