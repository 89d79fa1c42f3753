//! The internal reader. Its header carries this build's id, so each input
//! is also read behind this build's own header: mutations of the header
//! cannot keep the fuzzer from the node grammar. The library has no
//! tree → internal writer (`marshal::write_stream` writes from MPI handles), so the
//! re-encoding checked here is the external one; the header target checks
//! the internal writer through MPI.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mpix_marshal::testing::internal::{self, HEADER_LEN};
use mpix_marshal_fuzz::{assert_parse_error, check_decoded};

fn check(data: &[u8]) {
    match internal::read(data, mpix_marshal::testing::marshal::build_id()) {
        Ok(tree) => {
            check_decoded(&tree);
        }
        Err(e) => assert_parse_error(&e),
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    let mine = internal::header(mpix_marshal::testing::marshal::build_id());
    if data.len() >= HEADER_LEN && data[..HEADER_LEN] != mine {
        let mut fixed = mine.to_vec();
        fixed.extend_from_slice(&data[HEADER_LEN..]);
        check(&fixed);
    }
});
