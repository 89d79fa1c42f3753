//! Every input, in every representation, through the public entry points
//! `api::read` and `api::unmarshal` (headers first). With MPI initialized:
//! a parse error is the same error from unmarshal; a tree validation
//! refuses is refused by unmarshal with the same error, before any MPI
//! call; a valid tree is rebuilt (or refused as unsupported) into a type
//! that marshals again, in all three representations, to the same tree.
//! The direct unmarshal builds nothing read or validate refuses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mpix_marshal::testing::api::unmarshal_direct;
use mpix_marshal::testing::compressed::MAGIC_STORED_V3;
use mpix_marshal::testing::mpi;
use mpix_marshal::testing::tree::validate;
use mpix_marshal::{read, unmarshal, Representation};
use mpix_marshal_fuzz::{
    as_rebuilt, assert_read_error, check_decoded, check_rebuilt, mpi_init, resealed, REPS,
};

fuzz_target!(|data: &[u8]| {
    check(data);
    // The same stream with a checksum that holds (mpix_marshal_fuzz::resealed).
    if let Some(sealed) = resealed(data) {
        check(&sealed);
    }
});

fn check(data: &[u8]) {
    mpi_init();
    for rep in REPS {
        // The direct path (src/direct.rs) builds only what read accepts
        // and validate passes; unmarshal takes it first.
        if let Some(built) = unmarshal_direct(rep, data) {
            let t = built.expect("no MPI call fails on a valid stream");
            let tree = read(rep, data).expect("the direct path built what read refuses");
            validate(&tree).expect("the direct path built an invalid tree");
            if mpi::local().predefined(t).is_none() {
                mpi::free(t).expect("MPI_Type_free");
            }
        }
        let unmarshalled = unmarshal(rep, data);
        match read(rep, data) {
            Err(e) => {
                assert_read_error(&e);
                assert!(
                    unmarshalled.as_ref().err() == Some(&e),
                    "{rep:?}: read and unmarshal disagree"
                );
            }
            Ok(tree) => {
                let (_, valid) = check_decoded(&tree);
                if valid {
                    // No keyval is registered here: every attribute is skipped.
                    check_rebuilt(unmarshalled, &tree, as_rebuilt(&tree, &|_| false));
                } else {
                    assert!(
                        unmarshalled.as_ref().err() == validate(&tree).err().as_ref(),
                        "{rep:?}: unmarshal of an invalid tree: {unmarshalled:?}"
                    );
                }
            }
        }
    }
    // The same bytes stored in a (version-3, unchecksummed) compressed
    // stream read as the external ones; an error names the same byte, 8
    // bytes on, with the external offset as detail.
    if let Ok(len) = u32::try_from(data.len()) {
        let stored = [&MAGIC_STORED_V3.to_be_bytes()[..], &len.to_be_bytes(), data].concat();
        match (
            read(Representation::Compressed, &stored),
            read(Representation::External, data),
        ) {
            (Ok(a), Ok(b)) => assert!(a == b, "stored compressed stream reads another tree"),
            (Err(a), Err(b)) => assert!(
                a.offset() == b.offset().map(|at| at + 8) || a.offset().is_none(),
                "stored compressed stream's error names another byte: {a} / {b}"
            ),
            _ => panic!("stored compressed stream reads unlike its external stream"),
        }
    }
}
