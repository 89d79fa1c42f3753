//! The MPI edge's own contracts (src/mpi): owned handles free exactly the
//! handles they own, once; a stack of handles frees what it drops; the
//! constructors word their errors as the library always has and refuse
//! uneven arrays without calling MPI; `contents_owned` hands children over
//! with the right ownership.
//!
//! Handles are counted through the MPI profiling interface (tests/pmpi),
//! per thread, as in tests/leaks.rs.

mod common;
#[path = "pmpi/mod.rs"]
mod pmpi;

use common::*;
use mpix_marshal::testing::codes::Combiner;
use mpix_marshal::testing::mpi::construct::{construct, Call, Subarray};
use mpix_marshal::testing::mpi::{self as mpi, Datatype, Handles, OwnedDatatype};
use mpix_marshal::Error;

fn int() -> Datatype {
    named("MPI_INT")
}

fn contiguous_of_ints(n: i32) -> OwnedDatatype {
    construct(Call::Contiguous(n, int()), Combiner::Contiguous).unwrap()
}

/// An owned handle is freed when dropped, not when handed over; a
/// borrowed one never is.
#[test]
fn owned_handles_free_themselves() {
    init();
    let base = pmpi::live();
    {
        let t = contiguous_of_ints(2);
        assert!(t.is_owned());
        assert_eq!(pmpi::live(), base + 1);
    }
    assert_eq!(pmpi::live(), base, "dropped: freed");

    let raw = contiguous_of_ints(2).into_raw();
    assert_eq!(pmpi::live(), base + 1, "handed over: kept");
    assert_eq!(mpi::extent(raw).unwrap(), (0, 8));
    free(raw);
    assert_eq!(pmpi::live(), base);

    contiguous_of_ints(2).free().unwrap();
    assert_eq!(pmpi::live(), base, "freed now");

    drop(OwnedDatatype::borrowed(int()));
    assert!(!OwnedDatatype::borrowed(int()).is_owned());
    OwnedDatatype::borrowed(int()).free().unwrap();
    assert_eq!(
        mpi::extent(int()).unwrap(),
        (0, 4),
        "a predefined type stays"
    );
    assert_eq!(pmpi::live(), base);
}

/// A stack frees the owned handles it drops (truncated, replaced, or
/// dropped itself), and hands its top back with its ownership.
#[test]
fn handle_stacks_free_what_they_drop() {
    init();
    let base = pmpi::live();
    let mut s = Handles::default();
    s.push(OwnedDatatype::borrowed(int()));
    s.push(contiguous_of_ints(2));
    s.push(OwnedDatatype::borrowed(int()));
    s.push(contiguous_of_ints(3));
    assert_eq!(s.len(), 4);
    assert_eq!(s.raw()[0], int());
    assert_eq!(pmpi::live(), base + 2);

    // The raw handles are one array a constructor takes as it is.
    let st = construct(
        Call::Struct(&[1, 1, 1, 1], &[0, 4, 12, 16], s.raw()),
        Combiner::Struct,
    )
    .unwrap();
    assert_eq!(mpi::geometry(st.get()).unwrap().size, 4 + 8 + 4 + 12);
    drop(st);

    s.truncate(2);
    assert_eq!(pmpi::live(), base + 1, "one owned handle dropped");
    s.replace(1, OwnedDatatype::borrowed(int()));
    assert_eq!(pmpi::live(), base, "the replaced owned handle is freed");
    s.replace(0, contiguous_of_ints(4));
    assert_eq!(pmpi::live(), base + 1);

    let top = s.pop().unwrap();
    assert!(!top.is_owned());
    drop(top);
    s.push(contiguous_of_ints(5));
    let top = s.pop().unwrap();
    assert!(top.is_owned());
    assert_eq!(mpi::extent(top.get()).unwrap(), (0, 20));
    drop(top);
    assert_eq!(pmpi::live(), base + 1);

    drop(s);
    assert_eq!(pmpi::live(), base, "a dropped stack frees what it owns");
}

/// A constructor failure reads "<call> failed: <MPI's message> (building
/// <combiner>)", and leaves no handle.
#[test]
fn constructor_errors_name_the_call_and_the_combiner() {
    init();
    let base = pmpi::live();
    pmpi::fail_constructor(1);
    let e = construct(Call::Vector([2, 1, 2], int()), Combiner::Vector).unwrap_err();
    pmpi::fail_constructor(0);
    assert_eq!(
        e,
        Error::Mpi {
            call: "MPI_Type_vector",
            code: pmpi::INJECTED,
            message: format!(
                "{} (building MPI_COMBINER_VECTOR)",
                mpi::error_string(pmpi::INJECTED)
            ),
        }
    );
    assert_eq!(pmpi::live(), base);
}

/// Arrays of different lengths are refused before MPI is called.
#[test]
fn uneven_arrays_are_refused_without_a_call() {
    init();
    let made = pmpi::made();
    assert!(matches!(
        construct(Call::Indexed(&[1, 2], &[0], int()), Combiner::Indexed),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        construct(Call::Struct(&[1, 1], &[0, 4], &[int()]), Combiner::Struct),
        Err(Error::InvalidArgument(_))
    ));
    let sub = Subarray {
        sizes: &[4, 4],
        subsizes: &[2, 2],
        starts: &[0],
        order: mpi::local().constants.order_c,
        old: int(),
    };
    assert!(matches!(
        construct(Call::Subarray(sub), Combiner::Subarray),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(pmpi::made(), made);
}

/// `contents_owned` hands the derived children over as owned handles and
/// the predefined ones as borrowed.
#[test]
fn contents_owned_frees_the_derived_children() {
    init();
    let base = pmpi::live();
    let pair = contiguous_of_ints(2);
    let st = construct(
        Call::Struct(&[1, 1], &[0, 8], &[pair.get(), int()]),
        Combiner::Struct,
    )
    .unwrap();
    drop(pair); // the struct keeps what it needs of it
    assert_eq!(pmpi::live(), base + 1);
    let env = mpi::envelope(st.get()).unwrap();
    let mut c = mpi::Contents::default();
    let kids = mpi::contents_owned(st.get(), &env, &mut c).unwrap();
    assert!(c.types.is_empty());
    assert_eq!(kids.len(), 2);
    assert!(kids[0].is_owned() && !kids[1].is_owned());
    assert!(mpi::is_derived(kids[0].get()) && !mpi::is_derived(kids[1].get()));
    assert_eq!(kids[1].get(), int());
    assert_eq!(pmpi::live(), base + 2, "get_contents returned a reference");
    drop(kids);
    drop(st);
    assert_eq!(pmpi::live(), base);
}
