//! Streams written by one MPI implementation are read by the other.
//!
//! Each run writes the corpus as streams plus their observables (geometry
//! and a hash of the MPI_Pack output for counts 1..3) under
//! `$MPIX_CROSS_DIR/<implementation>/`, then reads back every stream found
//! there, its own and the other implementation's, rebuilds each type and
//! compares the observables. `scripts/test.sh` runs it once per MPI, so the
//! second run reads the first's streams. `MPIX_CROSS_PEER=<implementation>`
//! makes the peer's streams mandatory.

mod common;
use common::*;
use mpix_marshal::{compare, marshal, type_tree, unmarshal, Error, Level, Representation};
use std::fs;
use std::path::PathBuf;

fn implementation() -> &'static str {
    if mpix_marshal::testing::mpi::local().constants.is_open_mpi != 0 {
        "openmpi"
    } else {
        "mpich"
    }
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

/// Whether the type moves a long double. MPICH 4.0 packs a long double
/// inside a non-contiguous type as its 10 bytes of data and leaves the 6
/// padding bytes of the output as they were, where Open MPI copies all 16
/// bytes from the source: the same typemap packs to other bytes on the two
/// MPIs, so such packed bytes are compared only within one MPI.
fn holds_long_double(n: &mpix_marshal::testing::tree::Node) -> bool {
    use mpix_marshal::testing::tree::Kind;
    match n.kind {
        Kind::Named(p) => matches!(p.0, 0x220 | 0x224 | 0x225 | 0x22d),
        _ => n.children().iter().any(holds_long_double),
    }
}

/// Whether some level of the writer's tree recorded other bounds than the
/// same level of the type built here: the two MPIs pad that level
/// differently (spec/external.md §5.6).
fn pads_otherwise(
    written: &mpix_marshal::testing::tree::Node,
    here: &mpix_marshal::testing::tree::Node,
) -> bool {
    let differ = matches!((written.bounds, here.bounds), (Some(a), Some(b)) if a != b);
    differ
        || written
            .children()
            .iter()
            .zip(here.children())
            .any(|(a, b)| pads_otherwise(a, b))
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

#[test]
fn streams_cross_between_implementations() {
    init();
    let root = std::env::var_os("MPIX_CROSS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cross"));
    let mine = root.join(implementation());
    fs::create_dir_all(&mine).unwrap();
    let corpus = corpus();
    for (i, c) in corpus.iter().enumerate() {
        let bytes = marshal(Representation::External, c.datatype).unwrap();
        fs::write(mine.join(format!("{i:03}.mxdt")), &bytes).unwrap();
        fs::write(
            mine.join(format!("{i:03}.obs")),
            format!("{}\n{}\n", c.name, observables(c.datatype)),
        )
        .unwrap();
    }
    let mut dirs = vec![mine.clone()];
    if let Some(peer) = std::env::var_os("MPIX_CROSS_PEER") {
        let peer = root.join(peer);
        assert!(
            peer.is_dir(),
            "the peer's streams are missing: {}",
            peer.display()
        );
        dirs.push(peer);
    }
    let mut read = 0;
    let mut same_tree = 0;
    let mut long_double = 0;
    let mut padded_otherwise = Vec::new();
    for dir in dirs {
        let mut files: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for path in files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "mxdt"))
        {
            let bytes = fs::read(path).unwrap();
            let obs = fs::read_to_string(path.with_extension("obs")).unwrap();
            let (name, want) = obs.trim_end().split_once('\n').unwrap();
            let what = format!("{} ({})", name, dir.display());
            let peer = dir != mine;
            match unmarshal(Representation::External, &bytes) {
                Ok(t) => {
                    // The writer's size, bounds and true bounds, always: a
                    // rebuilt type keeps its writer's extent (§5.6); and
                    // its packed bytes, but for long doubles across MPIs.
                    let got = observables(t);
                    if peer && holds_long_double(&type_tree(t).unwrap()) {
                        assert_eq!(
                            geometry_of(&got),
                            geometry_of(want),
                            "{what}: geometry differs"
                        );
                        long_double += 1;
                    } else {
                        assert_eq!(got, want, "{what}: observables differ");
                    }
                    // The rebuilt type has the typemap of the same type built
                    // here, where the two MPIs build the type alike (not so
                    // where they pad an extent differently), and for most
                    // the same constructors and names too.
                    if let Some(local) = corpus.iter().find(|c| c.name == name) {
                        let written = mpix_marshal::read(Representation::External, &bytes).unwrap();
                        if pads_otherwise(&written, &type_tree(local.datatype).unwrap()) {
                            // Rebuilt with corrections, which the typemap
                            // level sees as explicit bounds (resized levels).
                            assert!(peer, "{what}: this MPI built other bounds");
                            padded_otherwise.push(name.to_string());
                        } else {
                            let c = compare(t, local.datatype, Level::Typemap).unwrap();
                            assert!(c.is_equal(), "{what}: {}", c.explanation);
                        }
                        if compare(t, local.datatype, Level::Names).unwrap().is_equal() {
                            same_tree += 1;
                        }
                    }
                    if !type_tree(t).unwrap().is_predefined() {
                        free(t);
                    }
                    read += 1;
                }
                // Only what the local MPI cannot build may be refused: large
                // counts beyond a C int on an MPI without _c constructors.
                Err(Error::Unsupported(msg)) => {
                    assert!(
                        !mpix_marshal::testing::mpi::local().has_large_count()
                            && msg.contains("large-count"),
                        "{what}: refused: {msg}"
                    );
                }
                Err(e) => panic!("{what}: {e}"),
            }
        }
    }
    assert!(read >= 40, "only {read} streams were read back");
    println!(
        "{read} streams read back; {same_tree} rebuilt with the local tree and names; \
         {long_double} peer long-double types compared by geometry only; \
         built with another extent here, kept the writer's: {padded_otherwise:?}"
    );
    // The types the two MPIs pad differently rebuild with corrections:
    // another tree by design.
    let comparable = read - padded_otherwise.len();
    assert!(
        same_tree * 10 >= comparable * 9,
        "only {same_tree} of {comparable} have the local tree"
    );
}
