//! The picture: for each type a panel with its data row (the bytes from lb
//! to ub on a ruler, each basic element a box coloured by its type, gaps in
//! grey), repetitions too large to draw in full shown as their first and
//! last copy with a hatched band labelled "×count, every stride B" between,
//! the lb/ub, extent and true extent marked, a ruler, and a legend. The
//! number of SVG elements is bounded whatever the type's element count.

use super::layout::Shape;
use std::fmt::Write;

/// The colours of basic types, in order of first appearance.
pub const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#8cd17d",
];
/// The background of the extent [lb, ub): bytes there that no element covers.
pub const GAP: &str = "#e4e4e4";
/// lb/ub lines and the extent bracket; the true extent bracket.
pub const BOUND: &str = "#c0392b";
pub const TRUE_BOUND: &str = "#1f5fa8";

/// Left margin of the ruler, in pixels; the ruler is `width` pixels wide.
pub const LEFT: f64 = 70.0;
const RIGHT: f64 = 70.0;
/// Most boxes, bands and markers drawn per panel.
const BUDGET: u64 = 4000;
/// The data row of the first panel: top and height.
pub const ROW_TOP: f64 = 58.0;
pub const ROW_HEIGHT: f64 = 36.0;

/// One type to draw.
pub struct Panel {
    pub title: String,
    pub subtitle: String,
    pub shape: Shape,
    /// lb and ub (= lb + extent) as the local MPI reports them.
    pub bounds: (i64, i64),
    /// True lb and true ub.
    pub true_bounds: (i64, i64),
}

enum Item {
    Box {
        b0: i64,
        b1: i64,
        label: String,
        n: i64,
    },
    Band {
        b0: i64,
        b1: i64,
        text: String,
        row: usize,
    },
    Marker {
        at: i64,
        upper: bool,
    },
}

struct Emit {
    items: Vec<Item>,
    budget: u64,
}

impl Emit {
    fn take(&mut self) -> bool {
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        true
    }

    fn shape(&mut self, s: &Shape, base: i64, row: usize) {
        match s {
            Shape::Elem { label, size, .. } => {
                if self.take() {
                    self.items.push(Item::Box {
                        b0: base,
                        b1: base + size,
                        label: label.clone(),
                        n: 1,
                    });
                }
            }
            Shape::Marker { upper } => {
                if self.take() {
                    self.items.push(Item::Marker {
                        at: base,
                        upper: *upper,
                    });
                }
            }
            Shape::Seq(items) => {
                for (at, x) in items {
                    self.shape(x, base + at, row);
                }
            }
            Shape::Repeat {
                count,
                stride,
                body,
            } => {
                if let Some((label, size, n)) = s.run() {
                    if self.take() {
                        self.items.push(Item::Box {
                            b0: base,
                            b1: base.saturating_add(size.saturating_mul(n)),
                            label: label.to_string(),
                            n,
                        });
                    }
                } else if s.pieces() <= self.budget {
                    for i in 0..*count {
                        self.shape(body, base.saturating_add(i.saturating_mul(*stride)), row);
                    }
                } else if self.take() {
                    let (lo, hi) = s.span().unwrap_or((0, 0));
                    self.items.push(Item::Band {
                        b0: base + lo,
                        b1: base + hi,
                        text: format!("×{count}, every {stride} B"),
                        row,
                    });
                    self.shape(body, base, row + 1);
                    self.shape(
                        body,
                        base.saturating_add((count - 1).saturating_mul(*stride)),
                        row + 1,
                    );
                }
            }
        }
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A tick step of 1, 2 or 5 times a power of ten giving about `n` ticks.
fn tick_step(span: f64, n: f64) -> f64 {
    let raw = (span / n).max(1.0);
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p)
}

/// The SVG of the panels, on one byte scale.
pub fn render(panels: &[Panel], width: u32) -> String {
    let w = f64::from(width);
    let lo = panels
        .iter()
        .map(|p| p.bounds.0.min(p.true_bounds.0))
        .min()
        .unwrap_or(0);
    let mut hi = panels
        .iter()
        .map(|p| p.bounds.1.max(p.true_bounds.1))
        .max()
        .unwrap_or(1);
    if hi <= lo {
        hi = lo + 1;
    }
    let x = |b: i64| LEFT + (b - lo) as f64 / (hi - lo) as f64 * w;

    // Colours by label, in order of first appearance over all panels.
    let mut census: Vec<(String, u128)> = Vec::new();
    for p in panels {
        p.shape.census(1, &mut census);
    }
    let colour = |label: &str| {
        let i = census.iter().position(|(l, _)| l == label).unwrap_or(0);
        PALETTE[i % PALETTE.len()]
    };

    let mut body = String::new();
    let mut y = 0.0;
    for p in panels {
        let mut e = Emit {
            items: Vec::new(),
            budget: BUDGET,
        };
        e.shape(&p.shape, 0, 0);
        let rows = e
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Band { row, .. } => Some(row + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0)
            .min(8);
        let top = y + ROW_TOP;
        let _ = writeln!(
            body,
            r#"<text x="{LEFT}" y="{:.1}" font-size="14" font-weight="bold">{}</text>"#,
            y + 22.0,
            esc(&p.title)
        );
        let _ = writeln!(
            body,
            r##"<text x="{LEFT}" y="{:.1}" font-size="11" fill="#444">{}</text>"##,
            y + 38.0,
            esc(&p.subtitle)
        );
        // The extent's background: its gaps show as grey.
        let (lb, ub) = p.bounds;
        let (gx0, gx1) = (x(lb.min(ub)), x(ub.max(lb)));
        let _ = writeln!(
            body,
            r#"<rect class="extent" x="{gx0:.2}" y="{top:.1}" width="{:.2}" height="{ROW_HEIGHT}" fill="{GAP}"/>"#,
            (gx1 - gx0).max(0.5)
        );
        // Bands behind, boxes and markers on top.
        for i in &e.items {
            if let Item::Band { b0, b1, text, row } = i {
                let (x0, x1) = (x(*b0), x(*b1));
                let _ = writeln!(
                    body,
                    r#"<rect class="band" x="{x0:.2}" y="{top:.1}" width="{:.2}" height="{ROW_HEIGHT}" fill="url(#hatch)" opacity="0.7"/>"#,
                    (x1 - x0).max(1.0)
                );
                if *row < rows {
                    let by = top + ROW_HEIGHT + 14.0 + 16.0 * *row as f64;
                    let _ = writeln!(
                        body,
                        r##"<path d="M{x0:.2},{:.1} V{by:.1} H{x1:.2} V{:.1}" fill="none" stroke="#555"/><text x="{:.2}" y="{:.1}" font-size="10" fill="#333">{}</text>"##,
                        by - 5.0,
                        by - 5.0,
                        x0 + 2.0,
                        by + 10.0,
                        esc(text)
                    );
                }
            }
        }
        for i in &e.items {
            match i {
                Item::Box { b0, b1, label, n } => {
                    let (x0, x1) = (x(*b0), x(*b1));
                    let bw = (x1 - x0).max(0.6);
                    let stroke = if bw / (*n as f64) >= 3.0 {
                        r##" stroke="#ffffff" stroke-width="0.6""##
                    } else {
                        ""
                    };
                    let _ = write!(
                        body,
                        r#"<rect class="elem" x="{x0:.2}" y="{top:.1}" width="{bw:.2}" height="{ROW_HEIGHT}" fill="{}"{stroke}><title>{}</title></rect>"#,
                        colour(label),
                        esc(&format!("{label} ×{n} at bytes {b0}..{b1}"))
                    );
                    // Element boundaries inside a run, when they are visible.
                    if *n > 1 && *n <= 512 && bw / (*n as f64) >= 3.0 {
                        let step = (b1 - b0) / n;
                        for k in 1..*n {
                            let xs = x(b0 + k * step);
                            let _ = write!(
                                body,
                                r##"<line x1="{xs:.2}" y1="{top:.1}" x2="{xs:.2}" y2="{:.1}" stroke="#ffffff" stroke-width="0.6"/>"##,
                                top + ROW_HEIGHT
                            );
                        }
                    }
                    body.push('\n');
                }
                Item::Marker { at, upper } => {
                    let xm = x(*at);
                    let _ = writeln!(
                        body,
                        r##"<line class="marker" x1="{xm:.2}" y1="{:.1}" x2="{xm:.2}" y2="{:.1}" stroke="#000" stroke-width="1.5"/><text x="{xm:.2}" y="{:.1}" font-size="9" text-anchor="middle">{}</text>"##,
                        top - 2.0,
                        top + ROW_HEIGHT + 2.0,
                        top - 4.0,
                        if *upper { "UB" } else { "LB" }
                    );
                }
                Item::Band { .. } => {}
            }
        }
        // lb and ub, the extent and the true extent.
        let below = top + ROW_HEIGHT + 16.0 * rows as f64 + 20.0;
        for (b, name) in [(lb, "lb"), (ub, "ub")] {
            let xb = x(b);
            let _ = writeln!(
                body,
                r#"<line class="bound" x1="{xb:.2}" y1="{:.1}" x2="{xb:.2}" y2="{:.1}" stroke="{BOUND}" stroke-width="2" stroke-dasharray="4,2"/><text x="{xb:.2}" y="{:.1}" font-size="10" fill="{BOUND}" text-anchor="middle">{name} {b}</text>"#,
                top - 8.0,
                below,
                top - 11.0
            );
        }
        let (tlb, tub) = p.true_bounds;
        for (b0, b1, colour, text, dy) in [
            (lb, ub, BOUND, format!("extent {}", ub - lb), 0.0),
            (
                tlb,
                tub,
                TRUE_BOUND,
                format!("true extent {} (true lb {tlb})", tub - tlb),
                18.0,
            ),
        ] {
            let by = below + 6.0 + dy;
            let (x0, x1) = (x(b0), x(b1));
            let _ = writeln!(
                body,
                r#"<path d="M{x0:.2},{:.1} V{by:.1} H{x1:.2} V{:.1}" fill="none" stroke="{colour}" stroke-width="1.5"/><text x="{:.2}" y="{:.1}" font-size="10" fill="{colour}" text-anchor="middle">{text}</text>"#,
                by - 5.0,
                by - 5.0,
                (x0 + x1) / 2.0,
                by + 11.0,
            );
        }
        y = below + 50.0;
    }

    // The ruler, under the panels.
    let ry = y + 4.0;
    let step = tick_step((hi - lo) as f64, 8.0);
    let _ = writeln!(
        body,
        r##"<line x1="{:.2}" y1="{ry:.1}" x2="{:.2}" y2="{ry:.1}" stroke="#000"/>"##,
        x(lo),
        x(hi)
    );
    let mut t = (lo as f64 / step).ceil() * step;
    while t <= hi as f64 {
        let xt = x(t as i64);
        let _ = writeln!(
            body,
            r##"<line x1="{xt:.2}" y1="{ry:.1}" x2="{xt:.2}" y2="{:.1}" stroke="#000"/><text x="{xt:.2}" y="{:.1}" font-size="10" text-anchor="middle">{}</text>"##,
            ry + 5.0,
            ry + 17.0,
            t as i64
        );
        t += step;
    }
    let _ = writeln!(
        body,
        r#"<text x="{:.2}" y="{:.1}" font-size="10" text-anchor="end">bytes</text>"#,
        LEFT - 6.0,
        ry + 4.0
    );

    // The legend: a swatch per basic type, with its element count.
    let mut ly = ry + 38.0;
    let per_row = ((w + LEFT) / 230.0).max(1.0) as usize;
    for (i, (label, n)) in census.iter().enumerate() {
        let lx = LEFT + (i % per_row) as f64 * 230.0;
        if i > 0 && i % per_row == 0 {
            ly += 18.0;
        }
        let _ = writeln!(
            body,
            r##"<rect class="swatch" x="{lx:.1}" y="{:.1}" width="12" height="12" fill="{}" stroke="#333" stroke-width="0.5"/><text x="{:.1}" y="{ly:.1}" font-size="11">{} × {n}</text>"##,
            ly - 10.0,
            PALETTE[i % PALETTE.len()],
            lx + 17.0,
            esc(label)
        );
    }
    let lgap = ly + 18.0;
    let _ = writeln!(
        body,
        r##"<rect x="{LEFT}" y="{:.1}" width="12" height="12" fill="{GAP}" stroke="#333" stroke-width="0.5"/><text x="{:.1}" y="{lgap:.1}" font-size="11">gap (in the extent, no data)</text><rect x="{:.1}" y="{:.1}" width="12" height="12" fill="url(#hatch)" stroke="#333" stroke-width="0.5"/><text x="{:.1}" y="{lgap:.1}" font-size="11">repeated (first and last copy drawn)</text>"##,
        lgap - 10.0,
        LEFT + 17.0,
        LEFT + 230.0,
        lgap - 10.0,
        LEFT + 247.0,
    );
    let height = (lgap + 14.0).ceil();
    let total_w = (LEFT + w + RIGHT).ceil();
    format!(
        r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{height}" viewBox="0 0 {total_w} {height}" font-family="sans-serif">
<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffffff"/><line x1="0" y1="0" x2="0" y2="6" stroke="#888" stroke-width="2"/></pattern></defs>
<rect width="100%" height="100%" fill="#ffffff"/>
{body}</svg>
"##
    )
}
