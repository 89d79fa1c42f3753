//! `draw`: the structure it draws agrees with MPI's typemap, and the
//! pictures rsvg-convert renders from its SVGs show what they should at
//! the places they should (colours at byte positions, gaps, sizes).

mod fixtures;

use fixtures::common::*;
use fixtures::*;
use mpix_marshal::{compare, Level};
use mpix_marshal_cli::draw::layout::{Builder, Shape};
use mpix_marshal_cli::draw::svg::{GAP, LEFT, PALETTE, ROW_HEIGHT, ROW_TOP};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The typemap a shape describes, expanded: (displacement, label).
fn expand(s: &Shape, base: i64, out: &mut Vec<(i64, String)>) {
    match s {
        Shape::Elem { label, .. } => out.push((base, label.clone())),
        Shape::Marker { .. } => out.push((base, "marker".into())),
        Shape::Seq(items) => items.iter().for_each(|(at, x)| expand(x, base + at, out)),
        Shape::Repeat {
            count,
            stride,
            body,
            ..
        } => (0..*count).for_each(|i| expand(body, base + i * stride, out)),
    }
}

/// For every corpus type of at most 200,000 elements without markers or
/// Fortran kinds: the shape, expanded and built as a struct of its basic
/// elements resized to the type's bounds, has the type's typemap, as the
/// library's comparison decides.
#[test]
fn the_drawn_structure_is_the_typemap() {
    init();
    let mut checked = 0;
    for case in corpus()
        .into_iter()
        .chain(built().into_iter().map(|(n, t)| Case {
            name: n.to_string(),
            datatype: t,
        }))
    {
        let tree = mpix_marshal::type_tree(case.datatype).unwrap();
        let mut b = Builder::default();
        let Ok(shape) = b.shape(&tree) else { continue };
        if mpix_marshal::tree_signature_count(&tree).unwrap() > 200_000 {
            continue;
        }
        let mut map = Vec::new();
        expand(&shape, 0, &mut map);
        if map.iter().any(|(_, l)| try_named(l).is_none()) {
            continue; // markers, Fortran kinds: no struct member to rebuild
        }
        let e = b.extents(&tree).unwrap();
        let lens = vec![1; map.len()];
        let disps: Vec<_> = map.iter().map(|(d, _)| *d as _).collect();
        let types: Vec<_> = map.iter().map(|(_, l)| named(l)).collect();
        let s = structure(&lens, &disps, &types);
        // Both resized to the type's bounds: equal markers, equal extents.
        let r = resized(s, e.lb as _, e.extent as _);
        let o = resized(case.datatype, e.lb as _, e.extent as _);
        let c = compare(o, r, Level::Typemap).unwrap();
        assert!(c.is_equal(), "{}: {}", case.name, c.explanation);
        free(s);
        free(r);
        free(o);
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} types checked");
}

#[test]
fn repetitions_are_not_expanded() {
    init();
    let t = vector(1_000_000_000, 1, 2, named("MPI_INT"));
    let shape = Builder::default()
        .shape(&mpix_marshal::type_tree(t).unwrap())
        .unwrap();
    let mut census = Vec::new();
    shape.census(1, &mut census);
    assert_eq!(census, vec![("MPI_INT".to_string(), 1_000_000_000)]);
    assert!(
        matches!(
            shape,
            Shape::Repeat {
                count: 1_000_000_000,
                stride: 8,
                ..
            }
        ),
        "{shape:?}"
    );
    // The indexed type's 75,000 non-empty blocks of lengths 1, 2, 3 are
    // three interleaved runs of period 20, not 75,000 pieces.
    let shape = Builder::default()
        .shape(&mpix_marshal::type_tree(indexed_100k()).unwrap())
        .unwrap();
    match &shape {
        Shape::Seq(items) => assert!(items.len() <= 4, "{} pieces", items.len()),
        Shape::Repeat { .. } => {}
        other => panic!("{other:?}"),
    }
}

/// The PNG rsvg-convert renders from the SVG `draw` writes for `files`.
struct Picture {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Picture {
    fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        let i = ((y * self.width + x) * 3) as usize;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }
}

fn hex(c: &str) -> [u8; 3] {
    let v = u32::from_str_radix(&c[1..], 16).unwrap();
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

fn rsvg() -> &'static str {
    let found = Command::new("rsvg-convert").arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "rsvg-convert is missing: apt-get install librsvg2-bin (scripts/setup.sh does)"
    );
    "rsvg-convert"
}

fn draw(files: &[&str], name: &str, width: u32) -> (PathBuf, Picture) {
    let out = pictures().join(format!("{name}.svg"));
    let mut args = vec!["draw".to_string()];
    args.extend(files.iter().map(|f| f.to_string()));
    args.extend([
        "-o".into(),
        out.display().to_string(),
        "--width".into(),
        width.to_string(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let png = out.with_extension("png");
    let r = Command::new(rsvg())
        .arg("-o")
        .arg(&png)
        .arg(&out)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let decoder = png::Decoder::new(std::fs::File::open(&png).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let rgb = buf[..info.buffer_size()]
        .chunks(channels)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    (
        out,
        Picture {
            width: info.width,
            height: info.height,
            rgb,
        },
    )
}

/// Where the pictures go: MPIX_PICTURES, or the fixture directory.
fn pictures() -> PathBuf {
    let d = std::env::var_os("MPIX_PICTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| dir().join("pictures"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The x pixel of byte `b` on a ruler of `width` pixels from `lo` to `hi`.
fn x_of(b: f64, lo: f64, hi: f64, width: u32) -> u32 {
    (LEFT + (b - lo) / (hi - lo) * f64::from(width)) as u32
}

fn row_y() -> u32 {
    (ROW_TOP + ROW_HEIGHT / 2.0) as u32
}

#[test]
fn a_contiguous_run_fills_its_extent_in_its_colour() {
    let (_, p) = draw(&[&fixture("contig4.mxdt")], "contig4", 400);
    // 16 bytes over 400 pixels: every element 100 pixels wide, MPI_INT's colour.
    for b in [1.0, 5.5, 10.0, 15.0] {
        assert_eq!(
            p.pixel(x_of(b, 0.0, 16.0, 400), row_y()),
            hex(PALETTE[0]),
            "byte {b}"
        );
    }
    // Outside the ruler: white.
    assert_eq!(p.pixel(10, row_y()), [255, 255, 255]);
    assert_eq!(p.width, (LEFT as u32) * 2 + 400);
}

#[test]
fn listing_1_a_and_b_share_a_scale_and_show_their_gaps() {
    let (svg, p) = draw(
        &[&fixture("listing1_a.mxdt"), &fixture("listing1_b.mxdt")],
        "listing1",
        600,
    );
    // A: bytes 0 and 2 of extent 3; B: the same, extent 4. Scale 0..4.
    let y = row_y();
    let byte = hex(PALETTE[0]);
    assert_eq!(p.pixel(x_of(0.5, 0.0, 4.0, 600), y), byte);
    assert_eq!(p.pixel(x_of(1.5, 0.0, 4.0, 600), y), hex(GAP), "A's gap");
    assert_eq!(p.pixel(x_of(2.5, 0.0, 4.0, 600), y), byte);
    assert_eq!(
        p.pixel(x_of(3.5, 0.0, 4.0, 600), y),
        [255, 255, 255],
        "past A's ub"
    );
    // B's panel, further down: its extent reaches byte 4, so byte 3.5 is a gap.
    let text = std::fs::read_to_string(&svg).unwrap();
    let tops: Vec<f64> = text
        .lines()
        .filter(|l| l.starts_with("<rect class=\"extent\""))
        .map(|l| {
            let y = l.split("y=\"").nth(1).unwrap();
            y[..y.find('"').unwrap()].parse().unwrap()
        })
        .collect();
    assert_eq!(tops.len(), 2);
    let yb = (tops[1] + ROW_HEIGHT / 2.0) as u32;
    assert_eq!(
        p.pixel(x_of(3.5, 0.0, 4.0, 600), yb),
        hex(GAP),
        "B's extra byte"
    );
    assert_eq!(p.pixel(x_of(2.5, 0.0, 4.0, 600), yb), byte);
    assert!(text.contains("extent 3<") && text.contains("extent 4<"));
}

#[test]
fn a_billion_elements_draw_as_their_structure() {
    let start = std::time::Instant::now();
    let (svg, p) = draw(&[&fixture("billion_gaps.mxdt")], "billion_gaps", 800);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.len() < 64 << 10, "{} bytes of SVG", text.len());
    assert!(
        text.contains("×1000000000, every 8 B"),
        "the repetition is labelled"
    );
    assert!(
        text.contains("MPI_INT × 1000000000"),
        "the legend counts the elements"
    );
    // The band covers the middle of the ruler (hatched: not MPI_INT, not white).
    let mid = p.pixel(LEFT as u32 + 400, row_y());
    assert_ne!(mid, hex(PALETTE[0]));
    assert_ne!(mid, [255, 255, 255]);
    assert!(p.height < 400);
    let (svg, p) = draw(&[&fixture("billion.mxdt")], "billion", 800);
    assert!(std::fs::read_to_string(&svg).unwrap().len() < 16 << 10);
    assert_eq!(p.pixel(LEFT as u32 + 400, row_y()), hex(PALETTE[0]));
    assert!(start.elapsed().as_secs() < 60);
}

#[test]
fn the_hdf5_type_and_a_darray_are_drawn() {
    let (svg, p) = draw(&[&fixture("hdf5.mxdt")], "hdf5", 1000);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("lb 0<") && text.contains("ub 200000<"),
        "bounds marked"
    );
    assert!(text.contains("MPI_BYTE × 5000"), "legend");
    // Its data lies in [160000, 200000): the start of the ruler is a gap.
    assert_eq!(
        p.pixel(x_of(1000.0, 0.0, 200000.0, 1000), row_y()),
        hex(GAP)
    );
    let (svg, _) = draw(&[&fixture("darray.mxdt")], "darray", 800);
    let text = std::fs::read_to_string(&svg).unwrap();
    // Rank 1 of a 2x2 grid of 16x10 doubles, block rows, cyclic(2) columns:
    // 8 rows of 4 columns in blocks of 2 = 32 doubles.
    assert!(text.contains("MPI_DOUBLE × 32"), "legend");
    assert!(text.contains("extent 1280<"));
    let _ = Path::new(&svg);
}
