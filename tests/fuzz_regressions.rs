//! What fuzzing (fuzz/, scripts/fuzz.sh) found, kept as tests: each input
//! that once crashed or broke a fuzz target's invariant, with what must
//! hold for it now.

mod common;
use common::*;
use mpix_marshal::testing::codes::Predefined;
use mpix_marshal::testing::external::{self, Encoding, HEADER_LEN};
use mpix_marshal::testing::tree::{Kind, Node};
use mpix_marshal::{marshal, read, unmarshal, Representation};

const REPS: [Representation; 3] = [
    Representation::External,
    Representation::Internal,
    Representation::Compressed,
];

/// The external stream whose node grammar is `body` (XDR words), behind
/// the header the writer gives its tree: the header holds the tree's
/// signature hash, so it is computed, not inlined.
fn stream(body: &[u32]) -> Vec<u8> {
    let mut bytes = vec![0; HEADER_LEN];
    bytes.extend(body.iter().flat_map(|w| w.to_be_bytes()));
    let tree = external::read_nodes(&bytes, HEADER_LEN, Encoding::Xdr).unwrap();
    let mut out = Vec::new();
    external::write(&tree, &mut out).unwrap();
    out
}

fn int() -> Node {
    Node::named(Predefined(0x209))
}

/// `tree` with its MPI-1 `*_INTEGER` combiners in their modern forms and
/// no recorded bounds (the trees built here by hand have none; a rebuilt
/// type records its MPI's).
fn modern(mut n: Node) -> Node {
    fn walk(n: &mut Node) {
        n.bounds = None;
        if let Kind::Hvector { legacy, .. }
        | Kind::Hindexed { legacy, .. }
        | Kind::Struct { legacy, .. } = &mut n.kind
        {
            *legacy = false;
        }
        n.children_mut().iter_mut().for_each(walk);
    }
    walk(&mut n);
    n
}

/// Found by the header target: MPICH 4.0's MPI-1 constructors
/// (`MPI_Type_hvector`, `MPI_Type_hindexed`, `MPI_Type_struct`) record
/// the modern combiners, so a stream with an `*_INTEGER` node rebuilds
/// into a type that marshals back with the modern combiner. The fuzz
/// targets compare rebuilt trees modulo that; this pins the rest: such a
/// stream rebuilds, and comes back the same tree but for the combiner's
/// MPI-1 form, nested or not, in every representation.
#[test]
fn mpi1_combiners_rebuild_to_the_same_tree_but_their_form() {
    init();
    let hvector = Node::new(Kind::Hvector {
        count: 2,
        blocklength: 3,
        stride: 48,
        old: Box::new(int()),
        legacy: true,
    });
    let hindexed = Node::new(Kind::Hindexed {
        blocklengths: vec![1, 2],
        displacements: vec![0, 16],
        old: Box::new(int()),
        legacy: true,
    });
    let structure = |types: Vec<Node>, legacy| {
        Node::new(Kind::Struct {
            blocklengths: vec![5; types.len()],
            displacements: (0..types.len() as i64).map(|i| 1 + 64 * i).collect(),
            types,
            legacy,
        })
    };
    let cases = [
        hvector.clone(),
        hindexed.clone(),
        structure(vec![int()], true),
        // The fuzzer's case: a STRUCT_INTEGER inside a STRUCT.
        structure(vec![structure(vec![hvector, hindexed], true)], false),
    ];
    for tree in cases {
        let mut stream = Vec::new();
        external::write(&tree, &mut stream).unwrap();
        let t = unmarshal(Representation::External, &stream).unwrap();
        for rep in REPS {
            let back = read(rep, &marshal(rep, t).unwrap()).unwrap();
            assert_eq!(modern(back), modern(tree.clone()), "{rep:?}");
        }
        free(t);
    }
}

/// Found by the header target (an internal stream of the HDF5-like type
/// with one code mutated to 0x390): a stream may name a predefined type
/// by an alias code (MPI_C_COMPLEX, MPI_LONG_LONG_INT, MPI_CXX_COMPLEX).
/// Where the alias is the same handle as its canonical type (MPICH), the
/// rebuilt type marshals back with the canonical code (src/shim/shim.c);
/// either way it is the alias's own local handle.
#[test]
fn alias_codes_rebuild_to_the_alias_handle() {
    init();
    let local = mpix_marshal::testing::mpi::local();
    for code in [0x390, 0x391, 0x392] {
        let alias = Predefined(code);
        let Some(handle) = local.datatype(alias) else {
            continue; // not defined by this MPI
        };
        let tree = Node::new(Kind::Contiguous {
            count: 2,
            old: Box::new(Node::named(alias)),
        });
        let mut stream = Vec::new();
        external::write(&tree, &mut stream).unwrap();
        let t = unmarshal(Representation::External, &stream).unwrap();
        for rep in REPS {
            let back = read(rep, &marshal(rep, t).unwrap()).unwrap();
            let Kind::Contiguous { count: 2, old } = back.kind else {
                panic!("{rep:?}: {back:?}");
            };
            let Kind::Named(p) = old.kind else {
                panic!("{rep:?}: {old:?}");
            };
            assert_eq!(local.datatype(p), Some(handle), "{code:#x} {rep:?}");
        }
        free(t);
    }
}

/// Found by the header target (an internal stream of a large-count
/// SUBARRAY with three subsizes near 2^61, 2^57 and 2^47): the signature
/// hash the marshal traversal writes in the external header
/// (src/marshal/signature.rs) saturated the product of a SUBARRAY's
/// subsizes at u128::MAX, where the tree's hash (signature::fold) applies
/// the factors one by one; past 2^128 elements the two differ, so
/// `marshal` wrote a stream its own `unmarshal` refused (corrupt: the
/// header's hash is not the type's). Here the subsizes are 2^43 each,
/// 2^129 elements in all.
#[test]
fn subarray_of_more_than_2_pow_128_elements_marshals_a_stream_that_reads() {
    init();
    const E43: [u32; 2] = [0x800, 0]; // 2^43 as an XDR hyper
    let mut body = vec![0x0006_006f, 0, 3]; // SUBARRAY, WIDE | LARGE; ndims 3
    body.extend(E43.repeat(6)); // sizes, subsizes
    body.extend([0; 8]); // starts, order C
    body.push(0x0247_0065); // MPI_BYTE
    let bytes = stream(&body);
    let tree = read(Representation::External, &bytes).unwrap();
    if !mpix_marshal::testing::mpi::local().has_large_count() {
        // This MPI (Open MPI 4.1) cannot build the type: refused, not misread.
        let err = unmarshal(Representation::External, &bytes).unwrap_err();
        assert!(err.to_string().contains("large-count"), "{err}");
        return;
    }
    let t = unmarshal(Representation::External, &bytes).unwrap();
    for rep in REPS {
        let back = read(rep, &marshal(rep, t).unwrap())
            .unwrap_or_else(|e| panic!("{rep:?}: the marshalled stream does not read: {e}"));
        assert_eq!(back, tree, "{rep:?}");
    }
    free(t);
}

/// Found by the header target (session 5, compressed version 2): the
/// compressed reader inflated into all the spare capacity of its per-thread
/// buffer, so the error for this stream (bad deflate data) named another
/// offset, or became "expands to more than", depending on what the thread
/// had decoded before; `read` and `unmarshal` of the same bytes disagreed.
/// The error must depend on the bytes alone.
#[test]
fn compressed_errors_do_not_depend_on_earlier_calls() {
    use flate2::{write::DeflateEncoder, Compression};
    use mpix_marshal::testing::compressed::MAGIC_DEFLATE;
    use std::io::Write;
    init();
    let c = Representation::Compressed;
    let crash = include_bytes!("fuzz/header-inflate-window.bin");
    let errors = move || {
        (
            read(c, crash).map(drop).unwrap_err(),
            unmarshal(c, crash).map(drop).unwrap_err(),
        )
    };
    let fresh = std::thread::spawn(errors).join().unwrap();
    assert_eq!(fresh.0, fresh.1, "read and unmarshal disagree");
    // Streams whose varint forms are n bytes (each byte a one-byte varint)
    // leave the thread's buffers with capacities around n.
    let deflate = |data: &[u8]| {
        let mut e = DeflateEncoder::new(Vec::new(), Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    };
    let mut x: u32 = 1;
    for n in [
        100,
        4_000,
        4_200,
        8_000,
        10_000,
        10_400,
        12_000,
        20_000,
        100_000,
        1 << 20,
    ] {
        let form: Vec<u8> = (0..n)
            .map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (x >> 24) as u8 & 0x7f
            })
            .collect();
        let claim = (12 + (n - 8) * 4) as u32;
        let warm = [
            &MAGIC_DEFLATE.to_be_bytes()[..],
            &claim.to_be_bytes(),
            &deflate(&form),
        ]
        .concat();
        assert!(read(c, &warm).is_err(), "no valid external stream");
        assert_eq!(
            errors(),
            fresh,
            "after a stream of {n} bytes of varint form"
        );
    }
}
