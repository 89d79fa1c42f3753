//! The checksum catches every single-bit flip: each bit of each golden
//! vector, of the compressed examples and of the test corpus's external
//! and compressed streams is flipped, one copy at a time, and every copy
//! is refused by `unmarshal` with a checksum mismatch (no copy rebuilds a
//! type, none is refused by any later check). spec/external.md §4.2 gives
//! the argument, this is its proof over the corpus.

mod common;
use common::*;
use mpix_marshal::testing::mpi::Datatype;
use mpix_marshal::{marshal, stream_checksum, unmarshal, Error, Representation};
use std::path::Path;

/// Streams longer than this have every bit of their first and last
/// `EDGE` bytes flipped, and every bit of about `SAMPLES` bytes spread
/// evenly between (the corpus's two huge types, 800 KB and 12 KB
/// external: each flipped copy costs a checksum over the whole stream);
/// shorter ones, every bit of every byte.
const WHOLE_UP_TO: usize = 4096;
const EDGE: usize = 1024;
const SAMPLES: usize = 1000;

/// The bytes of a stream of `len` bytes whose bits are flipped.
fn positions(len: usize) -> Vec<usize> {
    if len <= WHOLE_UP_TO {
        return (0..len).collect();
    }
    let mut at: Vec<usize> = (0..EDGE).chain(len - EDGE..len).collect();
    let stride = ((len - 2 * EDGE) / SAMPLES).max(1) | 1; // odd: every byte offset mod 4
    at.extend((EDGE..len - EDGE).step_by(stride));
    at
}

/// Flips every bit of the chosen bytes of `bytes`, one at a time, and
/// checks each copy is refused with a checksum mismatch. Returns how many
/// copies were refused.
fn every_flip_is_refused(what: &str, rep: Representation, bytes: &[u8]) -> usize {
    assert!(
        matches!(stream_checksum(rep, bytes), Ok(Some(_))),
        "{what}: the stream has no valid checksum"
    );
    let mut copy = bytes.to_vec();
    let mut refused = 0;
    for i in positions(bytes.len()) {
        for bit in 0..8 {
            copy[i] ^= 1 << bit;
            match unmarshal(rep, &copy) {
                Err(Error::Checksum {
                    offset,
                    stored,
                    computed,
                }) => {
                    assert_eq!(offset, bytes.len() - 4, "{what}: byte {i} bit {bit}");
                    assert_ne!(stored, computed);
                    refused += 1;
                }
                Ok(t) => panic!("{what} ({rep:?}): flipping bit {bit} of byte {i} rebuilt a type {t:?}"),
                Err(e) => panic!(
                    "{what} ({rep:?}): flipping bit {bit} of byte {i} was refused, but not by the checksum: {e}"
                ),
            }
            copy[i] ^= 1 << bit;
        }
    }
    assert_eq!(copy, bytes);
    refused
}

/// The record type: a struct of an `MPI_INT`, a named
/// vector(3, 1, 2, MPI_DOUBLE) and a named 2 × 2 subarray of floats
/// resized to 128 bytes.
fn record() -> Datatype {
    let v = set_name(vector(3, 1, 2, named("MPI_DOUBLE")), "triple");
    let sub = subarray(&[4, 4], &[2, 2], &[1, 1], false, named("MPI_FLOAT"));
    let r = set_name(resized(sub, 0, 128), "tile");
    structure(&[1, 1, 1], &[0, 8, 64], &[named("MPI_INT"), v, r])
}

#[test]
fn every_flip_of_the_golden_vectors_is_a_checksum_error() {
    init();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "mxdt"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 6, "the golden vectors");
    let mut total = 0;
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        let what = path.file_name().unwrap().to_string_lossy().into_owned();
        let n = every_flip_is_refused(&what, Representation::External, &bytes);
        assert_eq!(n, 8 * bytes.len());
        // The same type's compressed stream, as a writer writes it.
        let t = unmarshal(Representation::External, &bytes).unwrap();
        let packed = marshal(Representation::Compressed, t).unwrap();
        total += n + every_flip_is_refused(&what, Representation::Compressed, &packed);
    }
    println!("golden vectors: {total} flipped copies, all refused by the checksum");
}

#[test]
fn every_flip_of_the_corpus_is_a_checksum_error() {
    init();
    let mut cases = corpus();
    cases.push(Case {
        name: "the issue's record type".into(),
        datatype: record(),
    });
    let mut total = 0;
    for c in &cases {
        for rep in [Representation::External, Representation::Compressed] {
            let bytes = marshal(rep, c.datatype).unwrap();
            total += every_flip_is_refused(&c.name, rep, &bytes);
            if c.name.starts_with("the issue") {
                println!("{}: {rep:?} {} bytes", c.name, bytes.len());
            }
        }
    }
    println!(
        "corpus: {} types, {total} flipped copies, all refused by the checksum",
        cases.len()
    );
}

/// A stream without a checksum (external version 4) is still read, and a
/// flipped bit in it is not caught: what the checksum adds.
#[test]
fn a_version_4_stream_has_no_checksum_to_catch_a_flip() {
    init();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/v4");
    let v4 = std::fs::read(dir.join("halo_vector.mxdt")).unwrap();
    assert_eq!(stream_checksum(Representation::External, &v4), Ok(None));
    let mut flipped = v4.clone();
    flipped[21] ^= 1 << 5; // the name "halo" becomes "hAlo"
    let t = unmarshal(Representation::External, &flipped).unwrap();
    free(t);
}

/// A repeated marshal copies the checksum cached with the type's recorded
/// stream when its names are unchanged, and computes it anew when a name
/// changed: either way the checksum is that of the bytes.
#[test]
fn a_repeated_marshal_has_the_checksum_of_its_bytes() {
    init();
    let t = record();
    for rep in [Representation::External, Representation::Compressed] {
        let first = marshal(rep, t).unwrap();
        let again = marshal(rep, t).unwrap();
        assert_eq!(first, again, "{rep:?}");
        assert!(matches!(stream_checksum(rep, &again), Ok(Some(_))));
    }
    let t = set_name(t, "renamed record");
    let renamed = marshal(Representation::External, t).unwrap();
    assert!(renamed.windows(14).any(|w| w == b"renamed record"));
    assert!(matches!(
        stream_checksum(Representation::External, &renamed),
        Ok(Some(_))
    ));
    let back = unmarshal(Representation::External, &renamed).unwrap();
    free(back);
    free(t);
}
