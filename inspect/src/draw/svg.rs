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
pub const ROW_TOP: f64 = 78.0;
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
    /// The bytes to draw, [lo, hi): None for the whole type.
    pub range: Option<(i64, i64)>,
    /// What part is drawn, when not the whole type.
    pub note: Option<String>,
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
    /// Only what meets these bytes is emitted.
    lo: i64,
    hi: i64,
}

impl Emit {
    fn take(&mut self) -> bool {
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        true
    }

    /// Whether bytes [b0, b1) meet the range drawn (an empty span at its
    /// edge does).
    fn meets(&self, b0: i64, b1: i64) -> bool {
        b1 >= self.lo && b0 <= self.hi && (b1 > self.lo || b0 == b1) && b0 < self.hi
    }

    fn shape(&mut self, s: &Shape, base: i64, row: usize) {
        if let Some((lo, hi)) = s.span() {
            if !self.meets(base.saturating_add(lo), base.saturating_add(hi)) {
                return;
            }
        }
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
                level,
            } => {
                if let Some((label, size, n)) = s.run() {
                    // One box, clipped to the range.
                    let (b0, b1) = (base, base.saturating_add(size.saturating_mul(n)));
                    let (c0, c1) = (b0.max(self.lo), b1.min(self.hi));
                    if self.take() {
                        self.items.push(Item::Box {
                            b0: c0,
                            b1: c1,
                            label: label.to_string(),
                            n: ((c1 - c0) / size.max(1)).max(1),
                        });
                    }
                    return;
                }
                // The copies that meet the range.
                let (first, last) = self.copies_in_range(body, base, *count, *stride);
                if first > last {
                    return;
                }
                let n = last - first + 1;
                if (n as u64).saturating_mul(body.pieces()) <= self.budget {
                    for i in first..=last {
                        self.shape(body, base.saturating_add(i.saturating_mul(*stride)), row);
                    }
                } else if self.take() {
                    let (lo, hi) = body.span().unwrap_or((0, 0));
                    let at = |i: i64| base.saturating_add(i.saturating_mul(*stride));
                    let (b0, b1) = (at(first) + lo, at(last) + hi);
                    let name = if level.is_empty() {
                        String::new()
                    } else {
                        format!("{level} ")
                    };
                    self.items.push(Item::Band {
                        b0: b0.max(self.lo),
                        b1: b1.min(self.hi),
                        text: format!("{name}×{count}, every {stride} B"),
                        row,
                    });
                    self.shape(body, at(first), row + 1);
                    self.shape(body, at(last), row + 1);
                }
            }
        }
    }

    /// The first and last copy of `count` copies of `body` at `stride`
    /// from `base` that meet the range (first > last: none).
    fn copies_in_range(&self, body: &Shape, base: i64, count: i64, stride: i64) -> (i64, i64) {
        let Some((lo, hi)) = body.span() else {
            return (1, 0);
        };
        if stride <= 0 {
            return (0, count - 1);
        }
        // Copy i covers [base + i*stride + lo, base + i*stride + hi).
        let first = (self.lo - base - hi).div_euclid(stride).max(0);
        let last = (self.hi - base - lo).div_euclid(stride).min(count - 1);
        let meets = |i: i64| {
            let at = base.saturating_add(i.saturating_mul(stride));
            self.meets(at + lo, at + hi)
        };
        let mut first = first;
        while first <= last && !meets(first) {
            first += 1;
        }
        let mut last = last;
        while last >= first && !meets(last) {
            last -= 1;
        }
        (first, last)
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

/// The width a text takes, estimated on the generous side (0.66 em a
/// character: wider than DejaVu Sans's digits and most capitals).
pub fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.66
}

/// The box [x0, y0, x1, y1] of a text at (x, y) of font size `size`,
/// anchored at its start, middle or end.
pub fn text_box(x: f64, y: f64, anchor: &str, size: f64, text: &str) -> [f64; 4] {
    let w = text_width(text, size);
    let x0 = match anchor {
        "middle" => x - w / 2.0,
        "end" => x - w,
        _ => x,
    };
    [x0, y - size * 0.8, x0 + w, y + size * 0.25]
}

fn overlap(a: &[f64; 4], b: &[f64; 4]) -> bool {
    a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]
}

/// The labels of the picture, placed so that none overlaps another or
/// leaves the picture: a label that would is moved inside, then down.
struct Labels {
    boxes: Vec<[f64; 4]>,
    svg: String,
    right: f64,
}

impl Labels {
    /// Places `text` near (x, y), at most `tries` lines lower; false when
    /// there is no room (the label is left out).
    #[allow(clippy::too_many_arguments)]
    fn place_within(
        &mut self,
        tries: usize,
        x: f64,
        y: f64,
        anchor: &str,
        size: f64,
        text: &str,
        attrs: &str,
    ) -> bool {
        let w = text_width(text, size);
        let mut b = text_box(x, y, anchor, size, text);
        // Inside the picture, horizontally.
        let shift = if b[0] < 2.0 {
            2.0 - b[0]
        } else if b[2] > self.right - 2.0 {
            (self.right - 2.0 - b[2]).max(2.0 - b[0])
        } else {
            0.0
        };
        b[0] += shift;
        b[2] = b[0] + w;
        let x = x + shift;
        let mut y = y;
        let mut free = false;
        for _ in 0..=tries {
            if !self.boxes.iter().any(|o| overlap(o, &b)) {
                free = true;
                break;
            }
            let step = size + 3.0;
            y += step;
            b[1] += step;
            b[3] += step;
        }
        if !free {
            return false;
        }
        self.boxes.push(b);
        let _ = writeln!(
            self.svg,
            r#"<text class="label" x="{x:.2}" y="{y:.1}" font-size="{size}" text-anchor="{anchor}"{attrs}>{}</text>"#,
            esc(text)
        );
        true
    }

    /// Places `text` near (x, y), lower if it must.
    fn place(&mut self, x: f64, y: f64, anchor: &str, size: f64, text: &str, attrs: &str) {
        self.place_within(200, x, y, anchor, size, text, attrs);
    }

    fn bottom(&self) -> f64 {
        self.boxes.iter().map(|b| b[3]).fold(0.0, f64::max)
    }
}

/// `text` cut to at most `width` pixels at font size `size`, with "…".
fn fit(text: &str, width: f64, size: f64) -> String {
    let max = (width / (size * 0.66)).floor().max(1.0) as usize;
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut t: String = text.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// The SVG of the panels, on one byte scale: the union of their bounds,
/// or of their ranges when they have one.
pub fn render(panels: &[Panel], width: u32) -> String {
    let w = f64::from(width);
    let total_w = (LEFT + w + RIGHT).ceil();
    let view = |p: &Panel| {
        p.range.unwrap_or((
            p.bounds.0.min(p.true_bounds.0),
            p.bounds.1.max(p.true_bounds.1),
        ))
    };
    let lo = panels.iter().map(|p| view(p).0).min().unwrap_or(0);
    let mut hi = panels.iter().map(|p| view(p).1).max().unwrap_or(1);
    if hi <= lo {
        hi = lo + 1;
    }
    let ranged = panels.iter().any(|p| p.range.is_some());
    let x = |b: i64| LEFT + (b.clamp(lo, hi) - lo) as f64 / (hi - lo) as f64 * w;

    // Colours by label, in order of first appearance over all panels.
    let mut census: Vec<(String, u128)> = Vec::new();
    for p in panels {
        p.shape.census(1, &mut census);
    }
    let colour = |label: &str| {
        let i = census.iter().position(|(l, _)| l == label).unwrap_or(0);
        PALETTE[i % PALETTE.len()]
    };
    let mut drawn: Vec<String> = Vec::new();
    let mut banded = false;

    let mut labels = Labels {
        boxes: Vec::new(),
        svg: String::new(),
        right: total_w,
    };
    let mut body = String::new();
    let mut y = 0.0;
    for p in panels {
        let mut e = Emit {
            items: Vec::new(),
            budget: BUDGET,
            lo,
            hi,
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
        let room = total_w - LEFT - 4.0;
        labels.place(
            LEFT,
            y + 22.0,
            "start",
            14.0,
            &fit(&p.title, room, 14.0),
            r#" font-weight="bold""#,
        );
        labels.place(
            LEFT,
            y + 38.0,
            "start",
            11.0,
            &fit(&p.subtitle, room, 11.0),
            r##" fill="#444""##,
        );
        if let Some(note) = &p.note {
            labels.place(
                LEFT,
                y + 52.0,
                "start",
                11.0,
                &fit(note, room, 11.0),
                r##" fill="#444""##,
            );
        }
        // The extent's background, as far as it is drawn: its gaps show as grey.
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
                banded = true;
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
                        r##"<path d="M{x0:.2},{:.1} V{by:.1} H{x1:.2} V{:.1}" fill="none" stroke="#555"/>"##,
                        by - 5.0,
                        by - 5.0,
                    );
                    labels.place(
                        x0 + 2.0,
                        by + 10.0,
                        "start",
                        10.0,
                        text,
                        r##" fill="#333""##,
                    );
                }
            }
        }
        for i in &e.items {
            match i {
                Item::Box { b0, b1, label, n } => {
                    if !drawn.contains(label) {
                        drawn.push(label.clone());
                    }
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
                        r##"<line class="marker" x1="{xm:.2}" y1="{:.1}" x2="{xm:.2}" y2="{:.1}" stroke="#000" stroke-width="1.5"/>"##,
                        top - 2.0,
                        top + ROW_HEIGHT + 2.0,
                    );
                    let name = if *upper { "UB" } else { "LB" };
                    // Only where there is room: a thousand markers keep their lines.
                    labels.place_within(1, xm, top + ROW_HEIGHT + 10.0, "middle", 9.0, name, "");
                }
                Item::Band { .. } => {}
            }
        }
        // lb and ub (where they are in the range), the extent and the true extent.
        let below = top + ROW_HEIGHT + 16.0 * rows as f64 + 20.0;
        for (b, name) in [(lb, "lb"), (ub, "ub")] {
            if b < lo || b > hi {
                continue;
            }
            let xb = x(b);
            let _ = writeln!(
                body,
                r#"<line class="bound" x1="{xb:.2}" y1="{:.1}" x2="{xb:.2}" y2="{below:.1}" stroke="{BOUND}" stroke-width="2" stroke-dasharray="4,2"/>"#,
                top - 8.0,
            );
            let colour = format!(r#" fill="{BOUND}""#);
            labels.place(
                xb,
                top - 11.0,
                "middle",
                10.0,
                &format!("{name} {b}"),
                &colour,
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
                r#"<path d="M{x0:.2},{:.1} V{by:.1} H{x1:.2} V{:.1}" fill="none" stroke="{colour}" stroke-width="1.5"/>"#,
                by - 5.0,
                by - 5.0,
            );
            let fill = format!(r#" fill="{colour}""#);
            labels.place((x0 + x1) / 2.0, by + 11.0, "middle", 10.0, &text, &fill);
        }
        y = (below + 50.0).max(labels.bottom() + 14.0);
    }

    // The ruler, under the panels: about one tick label per 90 pixels.
    let ry = y + 4.0;
    let step = tick_step((hi - lo) as f64, (w / 90.0).max(2.0));
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
            r##"<line x1="{xt:.2}" y1="{ry:.1}" x2="{xt:.2}" y2="{:.1}" stroke="#000"/>"##,
            ry + 5.0,
        );
        labels.place(xt, ry + 17.0, "middle", 10.0, &format!("{}", t as i64), "");
        t += step;
    }
    labels.place(LEFT - 6.0, ry + 4.0, "end", 10.0, "bytes", "");

    // The legend: a swatch per basic type drawn (with its element count
    // when the whole type is drawn), the gap, and the hatch if used.
    let mut entries: Vec<(String, String)> = census
        .iter()
        .enumerate()
        .filter(|(_, (label, _))| drawn.contains(label))
        .map(|(i, (label, n))| {
            let text = if ranged {
                label.clone()
            } else {
                format!("{label} × {n}")
            };
            (PALETTE[i % PALETTE.len()].to_string(), text)
        })
        .collect();
    entries.push((GAP.to_string(), "gap (in the extent, no data)".into()));
    if banded {
        entries.push((
            "url(#hatch)".into(),
            "repeated (first and last copy drawn)".into(),
        ));
    }
    let col = entries
        .iter()
        .map(|(_, t)| text_width(t, 11.0) + 30.0)
        .fold(230.0, f64::max)
        .min(total_w - LEFT - 4.0);
    let per_row = ((total_w - LEFT) / col).max(1.0) as usize;
    let mut ly = labels.bottom().max(ry + 24.0) + 14.0;
    for (i, (fill, text)) in entries.iter().enumerate() {
        let lx = LEFT + (i % per_row) as f64 * col;
        if i > 0 && i % per_row == 0 {
            ly += 18.0;
        }
        let _ = writeln!(
            body,
            r##"<rect class="swatch" x="{lx:.1}" y="{:.1}" width="12" height="12" fill="{fill}" stroke="#333" stroke-width="0.5"/>"##,
            ly - 10.0,
        );
        let t = fit(text, col - 20.0, 11.0);
        labels.place(lx + 17.0, ly, "start", 11.0, &t, "");
    }
    let height = (labels.bottom() + 10.0).ceil();
    let texts = labels.svg;
    format!(
        r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{height}" viewBox="0 0 {total_w} {height}" font-family="sans-serif">
<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffffff"/><line x1="0" y1="0" x2="0" y2="6" stroke="#888" stroke-width="2"/></pattern></defs>
<rect width="100%" height="100%" fill="#ffffff"/>
{body}{texts}</svg>
"##
    )
}
