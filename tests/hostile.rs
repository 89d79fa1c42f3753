//! Truncated, corrupted and hand-made hostile streams are refused with a
//! precise error, or decode to a usable type; nothing panics.

mod common;
use common::*;
use mpix_marshal::testing::external::{self, reseal, Encoding, MAGIC, MAGIC_V4, VERSION};
use mpix_marshal::testing::signature::{self, HashKind};
use mpix_marshal::{marshal, type_tree, unmarshal, Error, Representation};

const REPS: [Representation; 3] = [
    Representation::External,
    Representation::Internal,
    Representation::Compressed,
];

fn unmarshal_ok_or_refused(rep: Representation, bytes: &[u8], what: &str) {
    match unmarshal(rep, bytes) {
        Ok(t) => {
            mpix_marshal::testing::mpi::geometry(t)
                .unwrap_or_else(|e| panic!("{what}: decoded into an unusable type: {e}"));
            if !type_tree(t).unwrap().is_predefined() {
                free(t);
            }
        }
        Err(
            Error::Corrupt { .. }
            | Error::Truncated { .. }
            | Error::Checksum { .. }
            | Error::InvalidArgument(_)
            | Error::Unsupported(_),
        ) => {}
        Err(e) => panic!("{what}: unexpected error {e}"),
    }
}

#[test]
fn every_strict_prefix_is_refused() {
    init();
    for c in corpus()
        .iter()
        .filter(|c| !c.name.contains("100000") && !c.name.contains("1000 members"))
    {
        for rep in REPS {
            let bytes = marshal(rep, c.datatype).unwrap();
            for len in 0..bytes.len() {
                match unmarshal(rep, &bytes[..len]) {
                    Err(
                        Error::Truncated { .. } | Error::Corrupt { .. } | Error::Checksum { .. },
                    ) => {}
                    other => panic!("{} {rep:?}: prefix of {len} bytes: {other:?}", c.name),
                }
            }
        }
    }
}

#[test]
fn single_byte_corruptions_never_crash() {
    init();
    for c in corpus()
        .iter()
        .filter(|c| !c.name.contains("100000") && !c.name.contains("1000 members"))
    {
        for rep in REPS {
            let good = marshal(rep, c.datatype).unwrap();
            for i in 0..good.len() {
                for v in [0x00u8, 0x01, 0x80, 0xff, good[i] ^ 0x10] {
                    if v == good[i] {
                        continue;
                    }
                    let mut bad = good.clone();
                    bad[i] = v;
                    let what = format!("{} {rep:?} byte {i} = {v:#x}", c.name);
                    unmarshal_ok_or_refused(rep, &bad, &what);
                    // With its checksum made to match: the parser's turn.
                    if rep != Representation::Internal && i < good.len() - 4 {
                        reseal(&mut bad);
                        unmarshal_ok_or_refused(rep, &bad, &format!("{what}, resealed"));
                    }
                }
            }
        }
    }
}

const ATTRS: u32 = 1 << 19;
const WIDE: u32 = external::FLAG_WIDE;
const BOUNDS: u32 = external::FLAG_BOUNDS;
const CORRECTION: u32 = external::FLAG_CORRECTION;
/// A NAMED node for MPI_INT: code 0x209 in the high half of the word.
const INT: u32 = 0x0209_0065;

fn words(w: &[u32]) -> Vec<u8> {
    let mut bytes: Vec<u8> = w.iter().flat_map(|x| x.to_be_bytes()).collect();
    // A stream with this version's header gets the hash of its tree, so that
    // each case fails for its own reason, not for the hash.
    if w.len() >= 3 && w[0] == MAGIC && w[1..3] == [VERSION << 29, 0] {
        let hash = external::read_nodes(&bytes, external::HEADER_LEN, Encoding::Xdr)
            .and_then(|t| signature::signature_hash(&t, HashKind::DEFAULT))
            .unwrap_or(0);
        bytes[4..12].copy_from_slice(&external::version_and_hash(hash));
    }
    // And its checksum, so that it gets past it.
    if w.first() == Some(&MAGIC) {
        bytes.extend([0; 4]);
        reseal(&mut bytes);
    }
    bytes
}

#[test]
fn hostile_streams_get_precise_errors() {
    init();
    let header = [MAGIC, VERSION << 29, 0];
    let cases: Vec<(&str, Vec<u32>, &str)> = vec![
        ("empty", vec![], "truncated"),
        (
            "bad magic",
            vec![0x89504e47, VERSION << 29, 0, INT],
            "not an mpix-marshal",
        ),
        ("future version", vec![MAGIC, 6 << 29, 0, INT], "version 6"),
        (
            "version 3",
            vec![MAGIC_V4, 3 << 29, 0, INT],
            "version 3 streams number the Fortran",
        ),
        (
            "version 2",
            vec![MAGIC_V4, 2 << 29, 0, INT],
            "version 2 streams do not record the bounds",
        ),
        ("older version", vec![MAGIC_V4, 1 << 16, INT], "version 1"),
        (
            "version 5 behind the version-4 magic",
            vec![MAGIC_V4, VERSION << 29, 0, INT],
            "version 5 behind magic word 0x4d584454",
        ),
        (
            "hash out of range",
            vec![MAGIC, VERSION << 29 | 0x1fff_ffff, 0xffff_ffff, INT],
            "not below 2^61",
        ),
        (
            "wrong signature hash",
            vec![MAGIC, VERSION << 29, 1, INT],
            "is not the type's",
        ),
        (
            "unknown combiner",
            [&header[..], &[99, INT]].concat(),
            "combiner code 99",
        ),
        (
            "unknown datatype",
            [&header[..], &[0x0999_0065]].concat(),
            "predefined datatype code 0x999",
        ),
        (
            "trailing bytes",
            [&header[..], &[INT, 0]].concat(),
            "follow the end",
        ),
        (
            "unknown flag",
            [&header[..], &[103 | 1 << 22, 1, INT]].concat(),
            "unknown node flags",
        ),
        (
            "bounds on a contiguous",
            [&header[..], &[103 | BOUNDS, 1, 0, 4, INT]].concat(),
            "MPI_COMBINER_CONTIGUOUS records no bounds",
        ),
        (
            "a struct as a correction",
            [&header[..], &[110 | CORRECTION, 1, 1, 0, INT]].concat(),
            "cannot be an extent correction",
        ),
        (
            "bounds cut short",
            [&header[..], &[105 | BOUNDS, 1, 1, 0, 0]].concat(),
            "a recorded extent",
        ),
        (
            "bounds that are not canonical",
            [
                &header[..],
                &[105 | BOUNDS | WIDE, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, INT],
            ]
            .concat(),
            "the wide flag is set",
        ),
        (
            "recorded bounds past 64 bits",
            [
                &header[..],
                &[
                    105 | BOUNDS | WIDE,
                    0,
                    1,
                    0,
                    1,
                    0,
                    0,
                    0x7fff_ffff,
                    0xffff_ffff,
                    0,
                    1,
                    INT,
                ],
            ]
            .concat(),
            "overflow 64 bits",
        ),
        (
            "2^31 blocks in 40 bytes",
            [&header[..], &[106, 0x7fff_ffff, 1, 1]].concat(),
            "needs at least",
        ),
        (
            "negative count",
            [&header[..], &[103, 0xffff_fff0, INT]].concat(),
            "out of range",
        ),
        (
            "needless wide",
            [&header[..], &[103 | 1 << 17, 0, 5, INT]].concat(),
            "wide flag",
        ),
        (
            "darray rank >= size",
            [&header[..], &[112, 2, 2, 1, 4, 0, 0xffff_ffff, 2, 0, INT]].concat(),
            "rank 2",
        ),
        (
            "darray psizes != size",
            [&header[..], &[112, 4, 0, 1, 8, 0, 0xffff_ffff, 2, 0, INT]].concat(),
            "product of psizes",
        ),
        (
            "subarray start past end",
            [&header[..], &[111, 1, 4, 2, 3, 0, INT]].concat(),
            "start",
        ),
        (
            "unknown order",
            [&header[..], &[111, 1, 4, 2, 0, 7, INT]].concat(),
            "order code 7",
        ),
        (
            "name with NUL",
            [&header[..], &[103 | 1 << 16, 2, 0x41004100, 1, INT]].concat(),
            "NUL",
        ),
        (
            "named with a name flag (read as code 1)",
            [&header[..], &[101 | 1 << 16]].concat(),
            "predefined datatype code 0x1",
        ),
        (
            "large flag on dup",
            [&header[..], &[102 | 1 << 18, INT]].concat(),
            "no large-count form",
        ),
        // Attribute blocks (spec §5.5): "a" = 0x61000000, "b" = 0x62000000.
        (
            "zero attributes",
            [&header[..], &[102 | ATTRS, 0, INT]].concat(),
            "attribute count 0",
        ),
        (
            "2^32-1 attributes in 24 bytes",
            [&header[..], &[102 | ATTRS, 0xffff_ffff, INT]].concat(),
            "more than the",
        ),
        (
            "attributes out of order",
            [
                &header[..],
                &[102 | ATTRS, 2, 1, 0x6200_0000, 0, 1, 0x6100_0000, 0, INT],
            ]
            .concat(),
            "increasing byte order",
        ),
        (
            "duplicate attribute",
            [
                &header[..],
                &[102 | ATTRS, 2, 1, 0x6100_0000, 0, 1, 0x6100_0000, 0, INT],
            ]
            .concat(),
            "increasing byte order",
        ),
        (
            "empty attribute name",
            [&header[..], &[102 | ATTRS, 1, 0, 0, INT]].concat(),
            "canonical name is not in 1..=255",
        ),
        (
            "attribute value past the end",
            [&header[..], &[102 | ATTRS, 1, 1, 0x6100_0000, 1000, INT]].concat(),
            "truncated",
        ),
        (
            "attribute value padding",
            [
                &header[..],
                &[102 | ATTRS, 1, 1, 0x6100_0000, 1, 0x0101_0000, INT],
            ]
            .concat(),
            "padding of an attribute's value",
        ),
        (
            "attributes on a named type",
            [&header[..], &[101 | ATTRS]].concat(),
            "predefined datatype code 0x8",
        ),
    ];
    for (what, w, expect) in cases {
        let err = unmarshal(Representation::External, &words(&w))
            .expect_err(what)
            .to_string();
        assert!(
            err.contains(expect),
            "{what}: error {err:?} does not say {expect:?}"
        );
    }
}

#[test]
fn nesting_past_the_limit_is_refused_without_overflow() {
    init();
    // Reading and rebuilding recurse once per level: under 1 MiB of
    // stack at the depth limit in an optimized build, up to 4 MiB in an
    // unoptimized one (docs/limits.md). The test runs on such a stack.
    let stack = if cfg!(debug_assertions) {
        4 << 20
    } else {
        1 << 20
    };
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(|| {
            // A stream claiming a million levels of MPI_Type_dup: the reader
            // stops at the limit, long before the end.
            let mut w = vec![MAGIC, VERSION << 29, 0];
            w.extend(std::iter::repeat_n(102u32, 1_000_000));
            w.push(INT);
            let err = external::read(&words(&w)).expect_err("too deep");
            assert!(err.to_string().contains("deeper than"), "{err}");
            // At the limit itself it still works.
            let depth = mpix_marshal::testing::tree::MAX_DEPTH - 1;
            let mut w = vec![MAGIC, VERSION << 29, 0];
            w.extend(std::iter::repeat_n(102u32, depth));
            w.push(INT);
            let t = unmarshal(Representation::External, &words(&w)).expect("511 dups");
            free(t);
        })
        .unwrap()
        .join()
        .expect("within the documented stack");
}

/// Compressed streams: claimed sizes are bounded before memory is spent,
/// and a stream that expands past its claim is cut off.
#[test]
fn compressed_streams_are_bounded() {
    use flate2::{write::DeflateEncoder, Compression};
    // Hand-made streams of version 3 (no checksum: the bounds are checked
    // by the same code in version 4, after its checksum).
    use mpix_marshal::testing::compressed::{
        to_varints, MAGIC_DEFLATE_V1, MAGIC_DEFLATE_V3 as MAGIC_DEFLATE,
        MAGIC_STORED_V3 as MAGIC_STORED, MAGIC_VARINTS, MAGIC_VARINTS_V3, MAX_EXPANDED,
    };
    use std::io::Write;
    init();
    let deflate = |data: &[u8]| {
        let mut e = DeflateEncoder::new(Vec::new(), Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    };
    let stream = |magic: u32, claim: u32, payload: &[u8]| {
        [&magic.to_be_bytes()[..], &claim.to_be_bytes(), payload].concat()
    };
    let refuse = |bytes: &[u8], expect: &str| {
        let err = unmarshal(Representation::Compressed, bytes)
            .expect_err(expect)
            .to_string();
        assert!(
            err.contains(expect),
            "error {err:?} does not say {expect:?}"
        );
    };
    // A 100-byte stream claiming 4 GiB.
    refuse(
        &stream(MAGIC_DEFLATE, u32::MAX, &[0; 92]),
        "claims to expand",
    );
    // A zlib bomb: 10 MB of zeros in about 10 KB. Claiming 100 bytes, it
    // may inflate to 118 bytes of varint form (8 + 5 per word).
    let zeros = deflate(&vec![0u8; 10 << 20]);
    assert!(zeros.len() < 20_000);
    refuse(
        &stream(MAGIC_DEFLATE, 100, &zeros),
        "expands to more than the 118 bytes",
    );
    // Claiming its real size, more than 64 per payload byte: refused unread.
    refuse(&stream(MAGIC_DEFLATE, 10 << 20, &zeros), "claims to expand");
    // 1000 zeros are a valid varint form (992 zero words), whose external
    // stream has version 0.
    refuse(
        &stream(MAGIC_DEFLATE, 12 + 992 * 4, &deflate(&[0; 1000])),
        "unsupported format version 0",
    );
    // Varint forms that are not the one shortest form of their words.
    for (words, form, expect) in [
        (1, &[0x80, 0x00][..], "shortest form"),
        (1, &[0xff, 0xff, 0xff, 0xff, 0x1f], "shortest form"),
        (
            2,
            &[0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
            "more than 5 bytes",
        ),
        (1, &[0x80][..], "ends inside a word"),
        (1, &[0x01, 0x01], "follow its last word"),
    ] {
        let v = [&[0u8; 8][..], form].concat();
        refuse(&stream(MAGIC_DEFLATE, 12 + 4 * words, &deflate(&v)), expect);
    }
    // Lengths no external stream has.
    refuse(
        &stream(MAGIC_DEFLATE, 14, &deflate(&[0; 10])),
        "multiple of 4",
    );
    refuse(
        &stream(MAGIC_DEFLATE, 8, &deflate(&[0; 8])),
        "multiple of 4",
    );
    // Past the documented limit, refused unread.
    let big = deflate(&vec![0u8; MAX_EXPANDED + 1]);
    refuse(
        &stream(MAGIC_DEFLATE, (MAX_EXPANDED + 1) as u32, &big),
        "claims to expand",
    );
    // Stored: the length must match.
    let v5 = marshal(Representation::External, named("MPI_INT")).unwrap();
    let ext = as_version_4(&v5);
    refuse(&stream(MAGIC_STORED, ext.len() as u32 + 1, &ext), "claims");
    assert!(unmarshal(
        Representation::Compressed,
        &stream(MAGIC_STORED, ext.len() as u32, &ext)
    )
    .is_ok());
    // A version-1 stream (the external stream deflated as is).
    refuse(
        &stream(MAGIC_DEFLATE_V1, ext.len() as u32, &deflate(&ext)),
        "version 1",
    );
    // The varint form of a real stream is read back.
    let mut form = Vec::new();
    to_varints(&ext, &mut form);
    assert!(unmarshal(
        Representation::Compressed,
        &stream(MAGIC_DEFLATE, ext.len() as u32, &deflate(&form))
    )
    .is_ok());
    // Bytes after the end of the deflate data.
    let mut tail = deflate(&form);
    tail.push(0);
    refuse(
        &stream(MAGIC_DEFLATE, ext.len() as u32, &tail),
        "follow the end of the deflate data",
    );
    // An external stream is not a compressed one.
    refuse(&ext, "not an mpix-marshal compressed stream");
    // The varint form as is (MXDP): read back; cut short, non-canonical,
    // with bytes after its last word, or without its header: refused.
    let mxdp = |form: &[u8]| [&MAGIC_VARINTS_V3.to_be_bytes()[..], form].concat();
    let mut form5 = Vec::new();
    to_varints(&v5[..v5.len() - 4], &mut form5);
    let mut mxcp = [&MAGIC_VARINTS.to_be_bytes()[..], &form5, &[0; 4]].concat();
    reseal(&mut mxcp);
    assert_eq!(
        marshal(Representation::Compressed, named("MPI_INT")).unwrap(),
        mxcp,
        "MPI_INT is written as its varint form, then its checksum"
    );
    assert!(unmarshal(Representation::Compressed, &mxdp(&form)).is_ok());
    let mut cut = form.clone();
    *cut.last_mut().unwrap() |= 0x80;
    refuse(&mxdp(&cut), "the varint form is invalid");
    let mut long = form.clone();
    long.extend([0x80, 0x00]);
    refuse(&mxdp(&long), "not in its one shortest form");
    refuse(&mxdp(&form[..5]), "ends inside the header");
    let mut garbage = form.clone();
    garbage.extend([0x80; 3]);
    refuse(&mxdp(&garbage), "follow its last word");
    // Another version inside (the external reader names it).
    let mut old = form.clone();
    old[0] = 0x40;
    refuse(&mxdp(&old), "version 2");
}

/// The writer's choice: the same external stream always gives the same
/// compressed bytes (whether a thread's memo of recent streams still holds
/// it or not), never more than 8 bytes over the external stream.
#[test]
fn compressed_output_is_a_function_of_the_stream() {
    init();
    let corpus = corpus();
    let first: Vec<Vec<u8>> = corpus
        .iter()
        .map(|c| marshal(Representation::Compressed, c.datatype).unwrap())
        .collect();
    // Again, in reverse order: the memo holds the last 8 streams only, so
    // most are compressed anew, the last ones replayed.
    for (c, want) in corpus.iter().zip(&first).rev() {
        assert_eq!(
            &marshal(Representation::Compressed, c.datatype).unwrap(),
            want,
            "{}",
            c.name
        );
    }
    for (c, z) in corpus.iter().zip(&first) {
        let ext = marshal(Representation::External, c.datatype).unwrap();
        assert!(z.len() <= ext.len() + 8, "{}", c.name);
        let back = unmarshal(Representation::Compressed, z).unwrap();
        assert_same(&c.name, c.datatype, back, true);
        free(back);
    }
}

/// Internal streams from another build are refused, never misread.
#[test]
fn internal_streams_from_another_build_are_refused() {
    init();
    let good = marshal(Representation::Internal, named("MPI_DOUBLE")).unwrap();
    assert_eq!(
        unmarshal(Representation::Internal, &good).unwrap(),
        named("MPI_DOUBLE")
    );
    let with = |i: usize, v: u8| {
        let mut b = good.clone();
        b[i] = v;
        b
    };
    let refuse = |bytes: &[u8], expect: &str| {
        let err = unmarshal(Representation::Internal, bytes)
            .expect_err(expect)
            .to_string();
        assert!(
            err.contains(expect),
            "error {err:?} does not say {expect:?}"
        );
    };
    let mut swapped = good.clone();
    swapped[..4].reverse();
    refuse(&swapped, "other byte order");
    refuse(&with(4, good[4] + 1), "internal format version");
    refuse(&with(5, 4), "4-byte pointers");
    refuse(
        &with(6, good[6] ^ 1),
        "another MPI library or mpix-marshal build",
    );
    let ext = marshal(Representation::External, named("MPI_DOUBLE")).unwrap();
    refuse(&ext, "not an mpix-marshal internal stream");
}
