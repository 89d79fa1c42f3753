//! The cross-reading matrix: streams written under one MPI are read under
//! every other.
//!
//! Each run writes the corpus, in the external and the compressed
//! representation, with the observables of each type (size, lb, extent,
//! true lb, true extent and a hash of the `MPI_Pack` output for counts
//! 1..3), under `$MPIX_CROSS_DIR/<writer>/`, `<writer>` being `$MPIX_MPI`
//! (set by scripts/mpi-env.sh: mpich4, openmpi4, mpich5, openmpi5, abi).
//! Then it reads every stream of every writer found there, its own
//! included, rebuilds each type and checks:
//!
//! - the observables are the writer's (packed bytes excepted for long
//!   doubles between two MPIs, which pack their padding differently:
//!   there the geometry only);
//! - the rebuilt constructor tree, names included, is the writer's, or it
//!   differs for a reason the library documents (docs/archiving.md, "What
//!   comes back"), which the test names: an extent correction (a RESIZED level
//!   restoring bounds this MPI pads otherwise), LB/UB markers rebuilt as
//!   RESIZED, an MPI-1 combiner rebuilt by its modern form, a large-count
//!   node rebuilt by a classic constructor;
//! - a stream is refused only with `MPIX_MARSHAL_ERR_UNSUPPORTED`, for a
//!   large-count construct on an MPI without `_c` constructors or a
//!   predefined type (a Fortran kind) the reading MPI does not define.
//!
//! `MPIX_CROSS_PEERS="a b ..."` makes those writers' streams mandatory;
//! `MPIX_CROSS_READ_ONLY=1` reads without writing (scripts/test.sh runs
//! every MPI's pass first, then each reader once more over all writers).
//! Each reader writes its row of the matrix to
//! `$MPIX_CROSS_DIR/matrix/<reader>` (and prints it).

mod common;
use common::*;
use mpix_marshal::testing::codes::Predefined;
use mpix_marshal::testing::tree::{Kind, Node};
use mpix_marshal::{marshal, type_tree, unmarshal, Error, Representation};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

const REPRESENTATIONS: [(Representation, &str); 2] = [
    (Representation::External, "ext"),
    (Representation::Compressed, "cmp"),
];

fn is_open_mpi() -> bool {
    mpix_marshal::testing::mpi::local().constants.is_open_mpi != 0
}

/// This build's name in the matrix.
fn implementation() -> String {
    match std::env::var("MPIX_MPI") {
        Ok(n) if !n.is_empty() => n,
        _ => {
            let c = &mpix_marshal::testing::mpi::local().constants;
            let family = if is_open_mpi() { "openmpi" } else { "mpich" };
            format!("{family}-mpi{}.{}", c.version, c.subversion)
        }
    }
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

/// Whether the type moves a long double. MPICH packs a long double inside
/// a non-contiguous type as its 10 bytes of data and leaves the 6 padding
/// bytes of the output as they were, where Open MPI copies all 16 bytes
/// from the source, and Open MPI 4 and 5 differ in that too: the same
/// typemap packs to other padding bytes on different MPIs, so such packed
/// bytes are compared only within one build (the geometry always).
fn holds_long_double(n: &Node) -> bool {
    match n.kind {
        Kind::Named(p) => matches!(p.0, 0x220 | 0x224 | 0x225 | 0x22d),
        _ => n.children().iter().any(holds_long_double),
    }
}

/// `observables` without the packed bytes' hashes.
fn geometry_of(obs: &str) -> &str {
    let end = obs.match_indices(' ').nth(4).map_or(obs.len(), |(i, _)| i);
    &obs[..end]
}

fn observables(t: mpix_marshal::testing::mpi::Datatype) -> String {
    let g = mpix_marshal::testing::mpi::geometry(t).unwrap();
    let mut s = format!(
        "{} {} {} {} {}",
        g.size, g.lb, g.extent, g.true_lb, g.true_extent
    );
    for count in 1..=3 {
        match pack(t, count) {
            Some(p) => s += &format!(" {:016x}", fnv(&p)),
            None => s += " -",
        }
    }
    s
}

/// A node without its children and recorded bounds, to compare one level.
fn shallow(n: &Node) -> Node {
    let mut n = n.clone();
    n.bounds = None;
    for c in n.children_mut() {
        *c = Node::named(Predefined(0x209));
    }
    n
}

/// Whether the rebuilt tree is the written one, names included, but for
/// what legitimately differs: recorded bounds (the reader restores them),
/// and the correction levels the reader adds to restore them, which
/// `corrected` counts. Open MPI's `MPI_Type_get_contents` returns fresh
/// duplicates below the root, which lose the correction mark (docs/archiving.md), so
/// there an unmarked RESIZED level around a level equal to the written one
/// is taken as a correction too.
fn same_tree(written: &Node, rebuilt: &Node, corrected: &mut usize) -> bool {
    if let Kind::Resized { old, .. } = &rebuilt.kind {
        let hidden = is_open_mpi() && !matches!(written.kind, Kind::Resized { .. });
        if rebuilt.correction || hidden {
            // The level's name may sit on the correction around it.
            let mut inner = (**old).clone();
            if inner.name.is_none() {
                inner.name = rebuilt.name.clone();
            }
            if same_tree(written, &inner, corrected) {
                *corrected += 1;
                return true;
            }
        }
    }
    shallow(written) == shallow(rebuilt)
        && written
            .children()
            .iter()
            .zip(rebuilt.children())
            .all(|(a, b)| same_tree(a, b, corrected))
}

/// The documented reasons a rebuilt tree may differ from the written one
/// on this MPI, found in the written tree.
fn reasons(n: &Node, out: &mut Vec<&'static str>) {
    let local = mpix_marshal::testing::mpi::local();
    let mut add = |r| {
        if !out.contains(&r) {
            out.push(r)
        }
    };
    match &n.kind {
        Kind::Named(p) if p.is_marker() && !local.has_mpi1() => add("LB/UB -> resized"),
        Kind::Hvector { legacy: true, .. }
        | Kind::Hindexed { legacy: true, .. }
        | Kind::Struct { legacy: true, .. } => add("MPI-1 combiner -> modern"),
        _ => {}
    }
    if n.large && !local.has_large_count() {
        add("large count -> classic");
    }
    for c in n.children() {
        reasons(c, out);
    }
}

/// Whether the tree names a predefined type the local MPI does not define.
fn lacks_a_predefined(n: &Node) -> bool {
    match n.kind {
        Kind::Named(p) => mpix_marshal::testing::mpi::local().datatype(p).is_none(),
        _ => n.children().iter().any(lacks_a_predefined),
    }
}

#[derive(Default)]
struct Cell {
    written: usize,
    same_tree: usize,
    corrected: usize,
    equivalent: BTreeMap<&'static str, usize>,
    refused: BTreeMap<&'static str, usize>,
}

impl Cell {
    fn show(&self) -> String {
        let eq: usize = self.equivalent.values().sum();
        let ok = self.same_tree + eq + self.refused.values().sum::<usize>();
        format!("{ok}/{}", self.written)
    }
}

fn writers(root: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().is_dir() && e.path().join("family").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn streams_cross_between_implementations() {
    init();
    let root = std::env::var_os("MPIX_CROSS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cross"));
    let me = implementation();
    let family = if is_open_mpi() { "openmpi" } else { "mpich" };
    let read_only = std::env::var("MPIX_CROSS_READ_ONLY").is_ok_and(|v| v == "1");
    let corpus = corpus();
    if !read_only {
        let mine = root.join(&me);
        let _ = fs::remove_dir_all(&mine);
        fs::create_dir_all(&mine).unwrap();
        for (i, c) in corpus.iter().enumerate() {
            for (rep, tag) in REPRESENTATIONS {
                let bytes = marshal(rep, c.datatype).unwrap();
                fs::write(mine.join(format!("{i:03}.{tag}.mxdt")), &bytes).unwrap();
            }
            fs::write(
                mine.join(format!("{i:03}.obs")),
                format!("{}\n{}\n", c.name, observables(c.datatype)),
            )
            .unwrap();
        }
        fs::write(mine.join("family"), family).unwrap();
    }
    let found = writers(&root);
    if let Ok(peers) = std::env::var("MPIX_CROSS_PEERS") {
        for p in peers.split_whitespace() {
            assert!(
                found.iter().any(|f| f == p),
                "the streams of {p} are missing in {}",
                root.display()
            );
        }
    }
    let mut row: BTreeMap<String, Cell> = BTreeMap::new();
    let mut details = Vec::new();
    for writer in &found {
        let dir = root.join(writer);
        let cell = row.entry(writer.clone()).or_default();
        let mut files: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "mxdt"))
            .collect();
        files.sort();
        for path in files {
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            let (index, tag) = file
                .trim_end_matches(".mxdt")
                .split_once('.')
                .expect("NNN.tag.mxdt");
            let rep = REPRESENTATIONS.iter().find(|r| r.1 == tag).unwrap().0;
            let bytes = fs::read(&path).unwrap();
            let obs = fs::read_to_string(dir.join(format!("{index}.obs"))).unwrap();
            let (name, want) = obs.trim_end().split_once('\n').unwrap();
            let what = format!("{name} ({writer} -> {me}, {tag})");
            cell.written += 1;
            let written = mpix_marshal::read(rep, &bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
            match unmarshal(rep, &bytes) {
                Ok(t) => {
                    // The writer's size, bounds and true bounds, always: a
                    // rebuilt type keeps its writer's extent (§5.6); and
                    // its packed bytes, but for long doubles across families.
                    let got = observables(t);
                    if writer != &me && holds_long_double(&written) {
                        assert_eq!(
                            geometry_of(&got),
                            geometry_of(want),
                            "{what}: geometry differs"
                        );
                    } else {
                        assert_eq!(got, want, "{what}: observables differ");
                    }
                    // The constructor tree with names: the writer's, or
                    // another one for a documented reason.
                    let rebuilt = type_tree(t).unwrap();
                    let mut corrected = 0;
                    if same_tree(&written, &rebuilt, &mut corrected) {
                        cell.same_tree += 1;
                        if corrected > 0 {
                            cell.corrected += 1;
                        }
                    } else {
                        let mut why = Vec::new();
                        reasons(&written, &mut why);
                        assert!(
                            !why.is_empty(),
                            "{what}: the rebuilt tree differs from the written one \
                             for no documented reason:\nwritten {written:?}\nrebuilt {rebuilt:?}"
                        );
                        for r in why {
                            *cell.equivalent.entry(r).or_default() += 1;
                        }
                        details.push(format!("{what}: typemap-equivalent"));
                    }
                    if !rebuilt.is_predefined() {
                        free(t);
                    }
                }
                // Only what the local MPI cannot build may be refused: large
                // counts beyond a C int on an MPI without _c constructors.
                // Or a predefined type (a Fortran kind) the local MPI lacks.
                Err(Error::Unsupported(msg)) => {
                    let local = mpix_marshal::testing::mpi::local();
                    assert!(
                        (!local.has_large_count() && msg.contains("large-count"))
                            || (msg.contains("is not defined by this MPI")
                                && lacks_a_predefined(&written)),
                        "{what}: refused: {msg}"
                    );
                    let why = if msg.contains("large-count") {
                        "large count"
                    } else {
                        "predefined type missing here"
                    };
                    *cell.refused.entry(why).or_default() += 1;
                    details.push(format!("{what}: refused (UNSUPPORTED: {msg})"));
                }
                Err(e) => panic!("{what}: {e}"),
            }
        }
    }
    let total: usize = row.values().map(|c| c.written).sum();
    assert!(total >= 80, "only {total} streams were read");
    for d in &details {
        println!("  {d}");
    }
    // The row: reader, then per writer "ok/written"; the legend below it.
    let mut line = format!("{me:<10}");
    let mut notes = Vec::new();
    for (w, c) in &row {
        line += &format!(" {:>9}", c.show());
        let mut n = format!(
            "{w}: {} same tree (incl. {} with extent corrections)",
            c.same_tree, c.corrected
        );
        for (r, k) in &c.equivalent {
            n += &format!(", {k} equivalent ({r})");
        }
        for (r, k) in &c.refused {
            n += &format!(", {k} refused (UNSUPPORTED: {r})");
        }
        notes.push(n);
    }
    let line = format!("{line}   | {}", notes.join("; "));
    println!("{line}");
    let matrix = root.join("matrix");
    fs::create_dir_all(&matrix).unwrap();
    let header = format!(
        "{:<10}{}",
        "reader",
        row.keys().map(|w| format!(" {w:>9}")).collect::<String>()
    );
    fs::write(matrix.join("header"), format!("{header}\n")).unwrap();
    fs::write(matrix.join(&me), format!("{line}\n")).unwrap();
}
