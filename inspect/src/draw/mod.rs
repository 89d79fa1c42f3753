//! `draw`: the typemap as a picture. `layout` turns a tree into structure
//! (runs and repetitions, never expanded), `svg` draws it.

pub mod layout;
pub mod svg;

use crate::error::{Error, Result};
use crate::input::Stream;
use mpix_marshal::describe;

/// What part of the types to draw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum View {
    /// Each type from its lb to its ub.
    #[default]
    Whole,
    /// Bytes [lo, hi).
    Range(i64, i64),
    /// One copy of each type's outermost repeated level, over one stride.
    Period,
}

/// The SVG of one or more streams, drawn one above the other on one scale.
pub fn svg(streams: &[Stream], width: u32, view: View) -> Result<String> {
    let mut panels = Vec::new();
    for s in streams {
        let fail = |source| Error::Stream {
            path: s.path.clone(),
            source,
        };
        let mut b = layout::Builder::default();
        let shape = b.shape(&s.tree).map_err(fail)?;
        let e = b.extents(&s.tree).map_err(fail)?;
        let mut title = format!("{}: {}", s.path.display(), describe::title(&s.tree));
        if let Some(n) = describe::name(&s.tree) {
            title.push_str(&format!(" {n:?}"));
        }
        let elements = mpix_marshal::tree_signature_count(&s.tree)?;
        let subtitle = format!(
            "size {} B, {elements} basic elements, lb {}, extent {}, true lb {}, true extent {}",
            e.size, e.lb, e.extent, e.true_lb, e.true_extent
        );
        let (range, note) = match view {
            View::Whole => (None, None),
            View::Range(lo, hi) => (Some((lo, hi)), Some(format!("bytes {lo}..{hi} drawn"))),
            View::Period => match period(&shape) {
                Some((lo, hi, note)) => (Some((lo, hi)), Some(note)),
                None => (None, Some("nothing repeats: the whole type drawn".into())),
            },
        };
        panels.push(svg::Panel {
            title,
            subtitle,
            shape,
            bounds: (e.lb, e.lb + e.extent),
            true_bounds: (e.true_lb, e.true_lb + e.true_extent),
            range,
            note,
        });
    }
    Ok(svg::render(&panels, width))
}

/// One period of a shape's outermost repeated level: the bytes of its
/// first copy's stride (or of the copy, when copies overlap or the stride
/// is not positive), and a note saying what is shown; None when nothing
/// repeats.
fn period(shape: &layout::Shape) -> Option<(i64, i64, String)> {
    let (at, r) = shape.outermost_repeat()?;
    let layout::Shape::Repeat {
        count,
        stride,
        body,
        level,
    } = r
    else {
        return None;
    };
    let (lo, hi) = body.span()?;
    let (lo, hi) = if *stride > 0 && hi - lo <= *stride {
        (at + lo, at + lo + stride)
    } else {
        (at + lo, at + hi)
    };
    let level = if level.is_empty() { "repeated" } else { level };
    Some((
        lo,
        hi.max(lo + 1),
        format!("one period drawn: copy 0 of the {level} level's {count}, every {stride} B"),
    ))
}
