//! `draw`: the typemap as a picture. `layout` turns a tree into structure
//! (runs and repetitions, never expanded), `svg` draws it.

pub mod layout;
pub mod svg;

use crate::describe;
use crate::error::{Error, Result};
use crate::input::Stream;

/// The SVG of one or more streams, drawn one above the other on one scale.
pub fn svg(streams: &[Stream], width: u32) -> Result<String> {
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
        panels.push(svg::Panel {
            title,
            subtitle: format!(
                "size {} B, {elements} basic elements, lb {}, extent {}, true lb {}, true extent {}",
                e.size, e.lb, e.extent, e.true_lb, e.true_extent
            ),
            shape,
            bounds: (e.lb, e.lb + e.extent),
            true_bounds: (e.true_lb, e.true_lb + e.true_extent),
        });
    }
    Ok(svg::render(&panels, width))
}
