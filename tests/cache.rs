//! Repeated marshalling replays what the first traversal cached on the
//! type, yet reads names and attributes anew each time; a dup of a cached
//! type is traversed as the DUP it is.

mod common;
#[path = "pmpi/mod.rs"]
mod pmpi;
use common::*;
use mpix_marshal::testing::tree::Kind;
use mpix_marshal::{marshal, type_tree, unmarshal, Representation};

const REPS: [Representation; 3] = [
    Representation::External,
    Representation::Internal,
    Representation::Compressed,
];

#[test]
fn a_second_marshal_sees_new_names() {
    init();
    let inner = contiguous(3, named("MPI_INT"));
    let outer = vector(2, 1, 4, inner);
    let mut t = hdf5_complex(false);
    for rep in REPS {
        let first = marshal(rep, outer).unwrap();
        assert_eq!(
            marshal(rep, outer).unwrap(),
            first,
            "{rep:?}: replay differs"
        );
        set_name(inner, &format!("inner {rep:?}"));
        set_name(outer, &format!("outer {rep:?}"));
        let second = marshal(rep, outer).unwrap();
        assert_ne!(second, first);
        let tree = mpix_marshal::read(rep, &second).unwrap();
        assert_eq!(
            tree.name.as_deref(),
            Some(format!("outer {rep:?}").as_bytes())
        );
        let inner_name = tree.children()[0].name.clone();
        if mpix_marshal::testing::mpi::local().constants.is_open_mpi == 0 {
            // MPICH's get_contents returns the very inner handle; Open
            // MPI's returns a duplicate named after the inner type then.
            assert_eq!(
                inner_name.as_deref(),
                Some(format!("inner {rep:?}").as_bytes())
            );
        }
        // The replayed stream rebuilds the same type.
        let back = unmarshal(rep, &second).unwrap();
        assert_same("replayed", outer, back, true);
        free(back);
        // A big, deep type too.
        let a = marshal(rep, t).unwrap();
        assert_eq!(marshal(rep, t).unwrap(), a);
    }
    free(outer);
    free(inner);
    free(t);
    t = contiguous(1, named("MPI_INT"));
    free(t);
}

#[test]
fn a_dup_of_a_cached_type_is_a_dup() {
    init();
    let t = vector(3, 2, 5, named("MPI_DOUBLE"));
    let first = marshal(Representation::External, t).unwrap();
    let d = dup(t);
    let tree = type_tree(d).unwrap();
    assert!(matches!(tree.kind, Kind::Dup(_)), "{tree:?}");
    assert_eq!(marshal(Representation::External, t).unwrap(), first);
    free(d);
    // The original still replays after its dup is gone.
    assert_eq!(marshal(Representation::External, t).unwrap(), first);
    free(t);
}

/// A type with no derived level below its root replays on every MPI (on
/// Open MPI too: get_contents returns no duplicate to go stale).
#[test]
fn a_flat_type_replays_on_every_mpi() {
    init();
    for rep in REPS {
        let t = set_name(vector(3, 2, 5, named("MPI_DOUBLE")), "flat");
        let first = marshal(rep, t).unwrap();
        let (e0, c0) = pmpi::queries();
        let again = marshal(rep, t).unwrap();
        let (e1, c1) = pmpi::queries();
        assert_eq!(again, first, "{rep:?}");
        assert_eq!((e1 - e0, c1 - c0), (0, 0), "{rep:?}: the repeat traversed");
        // A rename is still seen.
        set_name(t, "renamed");
        let renamed = marshal(rep, t).unwrap();
        assert_ne!(renamed, first, "{rep:?}: the rename went unseen");
        assert_eq!(unmarshal_name(rep, &renamed), "renamed");
        free(t);
    }
}

fn unmarshal_name(rep: Representation, bytes: &[u8]) -> String {
    let t = unmarshal(rep, bytes).unwrap();
    let n = mpix_marshal::testing::mpi::get_name(t)
        .unwrap()
        .unwrap_or_default();
    free(t);
    String::from_utf8(n).unwrap()
}

/// The first marshal of a type traverses it (envelope and contents on every
/// level, counted through the profiling interface); a repeated marshal
/// replays the plan cached on the type and asks MPI for neither. On Open
/// MPI, whose get_contents returns fresh duplicates, a type with derived
/// levels below its root has no plan to keep and every marshal traverses
/// (docs/archiving.md, "Repeated marshalling").
#[test]
fn a_repeated_marshal_skips_the_traversal() {
    init();
    let open_mpi = mpix_marshal::testing::mpi::local().constants.is_open_mpi != 0;
    for rep in REPS {
        let t = hdf5_complex(false);
        let queries = |f: &mut dyn FnMut()| {
            let (e0, c0) = pmpi::queries();
            f();
            let (e1, c1) = pmpi::queries();
            (e1 - e0, c1 - c0)
        };
        let mut first = Vec::new();
        let traversal = queries(&mut || first = marshal(rep, t).unwrap());
        assert!(
            traversal.0 > 5 && traversal.1 > 5,
            "{rep:?}: first marshal {traversal:?}"
        );
        let mut again = Vec::new();
        let replay = queries(&mut || again = marshal(rep, t).unwrap());
        assert_eq!(again, first, "{rep:?}: replay differs");
        if open_mpi {
            assert_eq!(replay, traversal, "{rep:?}: Open MPI traverses every time");
        } else {
            assert_eq!(
                replay,
                (0, 0),
                "{rep:?}: the repeat traversed (first: {traversal:?})"
            );
        }
        free(t);
    }
}
