//! What fuzzing (fuzz/, scripts/fuzz.sh) found, kept as tests: each input
//! that once crashed or broke a fuzz target's invariant, with what must
//! hold for it now.

mod common;
use common::*;
use mpix_marshal::codes::Predefined;
use mpix_marshal::tree::{Kind, Node};
use mpix_marshal::{external, marshal, read, unmarshal, Representation};

const REPS: [Representation; 3] = [
    Representation::External,
    Representation::Internal,
    Representation::Compressed,
];

fn int() -> Node {
    Node::named(Predefined(0x209))
}

/// `tree` with its MPI-1 `*_INTEGER` combiners in their modern forms.
fn modern(mut n: Node) -> Node {
    fn walk(n: &mut Node) {
        match &mut n.kind {
            Kind::Hvector { legacy, old, .. } | Kind::Hindexed { legacy, old, .. } => {
                *legacy = false;
                walk(old);
            }
            Kind::Struct { legacy, types, .. } => {
                *legacy = false;
                types.iter_mut().for_each(walk);
            }
            Kind::Dup(old) | Kind::Contiguous { old, .. } | Kind::Resized { old, .. } => walk(old),
            _ => {}
        }
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
