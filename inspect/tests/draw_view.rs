//! `draw --range` and `draw --period`: what part of a large type is drawn,
//! the legend listing only what is drawn, and, in every picture the tests
//! make, labels that neither overlap nor leave the picture (checked on the
//! SVG's geometry, with the command's own text-size estimate).

mod fixtures;

use fixtures::*;
use mpix_marshal_cli::draw::svg::{text_box, LEFT};

/// The SVG `draw` writes for `args` (files and options).
fn svg(name: &str, args: &[&str]) -> String {
    let out = dir().join(format!("view-{name}.svg"));
    let mut all = vec!["draw"];
    all.extend_from_slice(args);
    let o_path = out.display().to_string();
    all.extend(["-o", &o_path]);
    let o = run(&all);
    assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
    std::fs::read_to_string(&out).unwrap()
}

/// The value of attribute `a` in an SVG element's text.
fn attr<'a>(el: &'a str, a: &str) -> Option<&'a str> {
    let key = format!(" {a}=\"");
    let start = el.find(&key)? + key.len();
    Some(&el[start..start + el[start..].find('"')?])
}

fn num(el: &str, a: &str) -> f64 {
    attr(el, a).unwrap().parse().unwrap()
}

/// Every <text>: (x, y, anchor, font size, content).
fn texts(svg: &str) -> Vec<(f64, f64, String, f64, String)> {
    svg.split("<text")
        .skip(1)
        .map(|t| {
            let close = t.find("</text>").unwrap();
            let el = &t[..close];
            let gt = el.find('>').unwrap();
            let content = el[gt + 1..]
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&amp;", "&");
            (
                num(el, "x"),
                num(el, "y"),
                attr(el, "text-anchor").unwrap_or("start").to_string(),
                num(el, "font-size"),
                content,
            )
        })
        .collect()
}

/// Asserts that no two labels overlap and that each lies in the picture.
fn assert_labels_fit(name: &str, svg: &str) {
    let head = svg.split("<svg").nth(1).unwrap();
    let (w, h) = (num(head, "width"), num(head, "height"));
    let boxes: Vec<_> = texts(svg)
        .into_iter()
        .map(|(x, y, anchor, size, text)| (text_box(x, y, &anchor, size, &text), text))
        .collect();
    assert!(boxes.len() >= 5, "{name}: {} labels", boxes.len());
    for (i, (a, ta)) in boxes.iter().enumerate() {
        assert!(
            a[0] >= 0.0 && a[1] >= 0.0 && a[2] <= w && a[3] <= h,
            "{name}: {ta:?} at {a:?} leaves the {w}x{h} picture"
        );
        for (b, tb) in &boxes[i + 1..] {
            let apart = a[2] <= b[0] || b[2] <= a[0] || a[3] <= b[1] || b[3] <= a[1];
            assert!(apart, "{name}: {ta:?} {a:?} overlaps {tb:?} {b:?}");
        }
    }
}

/// The legend's entries: the text beside each swatch.
fn legend(svg: &str) -> Vec<String> {
    let swatches = svg.matches("class=\"swatch\"").count();
    let t = texts(svg);
    t[t.len() - swatches..]
        .iter()
        .map(|x| x.4.clone())
        .collect()
}

/// The byte ranges of the element boxes drawn, from their <title>.
fn boxes(svg: &str) -> Vec<String> {
    svg.split("<rect class=\"elem\"")
        .skip(1)
        .map(|r| {
            let t = &r[r.find("<title>").unwrap() + 7..];
            t[..t.find("</title>").unwrap()].to_string()
        })
        .collect()
}

#[test]
fn a_range_of_a_billion_copies_draws_the_copies_in_it() {
    // vector(10^9, 1, 2, MPI_INT): an int every 8 bytes.
    let s = svg(
        "billion_range",
        &[&fixture("billion_gaps.mxdt"), "--range", "16:80"],
    );
    // Copies 2 to 9 in full, nothing hatched.
    let b = boxes(&s);
    assert_eq!(b.len(), 8, "{b:?}");
    assert_eq!(b[0], "MPI_INT ×1 at bytes 16..20");
    assert_eq!(b[7], "MPI_INT ×1 at bytes 72..76");
    assert!(!s.contains("class=\"band\""));
    // The ruler spans the range: byte 16 at the left edge.
    let first = s.split("<rect class=\"elem\"").nth(1).unwrap();
    assert_eq!(num(first, "x"), LEFT);
    assert!(s.contains("bytes 16..80 drawn"));
    // The legend: the int and the gap, no hatch, no whole-type count.
    assert_eq!(legend(&s), ["MPI_INT", "gap (in the extent, no data)"]);
    assert_labels_fit("billion_range", &s);
}

#[test]
fn a_range_keeps_only_the_types_in_it_in_the_legend() {
    // particle: 3 doubles at 0, 3 doubles at 24, an int at 48.
    let s = svg(
        "particle_range",
        &[&fixture("particle.mxdt"), "--range", "0:24"],
    );
    assert_eq!(legend(&s), ["MPI_DOUBLE", "gap (in the extent, no data)"]);
    let s = svg(
        "particle_range2",
        &[&fixture("particle.mxdt"), "--range", "40:56"],
    );
    assert_eq!(
        legend(&s),
        ["MPI_DOUBLE", "MPI_INT", "gap (in the extent, no data)"]
    );
    // A box across the range's edge is cut at it: the second run of
    // doubles (24..48) from 40.
    assert!(
        boxes(&s).contains(&"MPI_DOUBLE ×1 at bytes 40..48".to_string()),
        "{:?}",
        boxes(&s)
    );
    // Not a range: an error, status 2.
    let o = run(&[
        "draw",
        &fixture("particle.mxdt"),
        "--range",
        "9:3",
        "-o",
        "-",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("LO must be less than HI"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_period_of_a_block_cyclic_darray_and_of_a_vector_shows_the_pattern() {
    // Rank 1 of a 2x2 grid of 16x10 doubles, block rows, cyclic(2)
    // columns: one period is one row of the array (80 bytes), holding
    // the rank's two blocks of two columns.
    let s = svg("darray_period", &[&fixture("darray.mxdt"), "--period"]);
    assert!(
        s.contains("one period drawn: copy 0 of the"),
        "{}",
        texts(&s)[1].4
    );
    let b = boxes(&s);
    assert_eq!(b.len(), 2, "{b:?}");
    assert!(
        b.iter().all(|x| x.starts_with("MPI_DOUBLE ×2 at bytes")),
        "{b:?}"
    );
    assert_eq!(legend(&s)[0], "MPI_DOUBLE");
    assert_labels_fit("darray_period", &s);
    // 10^9 copies of an int every 8 bytes: one int and its gap.
    let s = svg(
        "billion_period",
        &[&fixture("billion_gaps.mxdt"), "--period"],
    );
    assert!(
        s.contains("VECTOR level's 1000000000, every 8 B"),
        "{}",
        texts(&s)[1].4
    );
    assert_eq!(boxes(&s), ["MPI_INT ×1 at bytes 0..4"]);
    assert_labels_fit("billion_period", &s);
}

#[test]
fn level_names_label_the_repetitions() {
    let s = svg("billion_whole", &[&fixture("billion_gaps.mxdt")]);
    assert!(s.contains(">VECTOR ×1000000000, every 8 B<"), "{s}");
}

/// Every fixture and golden vector, whole, in a range and by period, at
/// two widths: no label overlaps another or leaves the picture.
#[test]
fn labels_never_overlap_or_leave_the_picture() {
    let mut files: Vec<String> = [
        "listing1_a.mxdt",
        "listing1_b.mxdt",
        "hdf5.mxdt",
        "darray.mxdt",
        "contig4.mxdt",
        "billion.mxdt",
        "billion_gaps.mxdt",
        "particle.mxdt",
        "indexed_100k.mxdt",
    ]
    .iter()
    .map(|f| fixture(f))
    .collect();
    for g in [
        "int",
        "halo_vector",
        "paper_indexed",
        "resized_wide",
        "struct_int_double",
    ] {
        files.push(golden(&format!("{g}.mxdt")).display().to_string());
    }
    if std::path::Path::new(&fixture("hdf5_lbub.mxdt")).exists() {
        files.push(fixture("hdf5_lbub.mxdt"));
    }
    let mut n = 0;
    for f in &files {
        for view in [&[][..], &["--period"], &["--range", "3:41"]] {
            for width in ["200", "960"] {
                let mut args = vec![f.as_str(), "--width", width];
                args.extend_from_slice(view);
                let name = format!("fit{n}");
                assert_labels_fit(&format!("{f} {view:?} {width}"), &svg(&name, &args));
                n += 1;
            }
        }
    }
    // Two types on one scale.
    let s = svg(
        "fit_two",
        &[
            &fixture("listing1_a.mxdt"),
            &fixture("listing1_b.mxdt"),
            "--width",
            "200",
        ],
    );
    assert_labels_fit("two", &s);
}
