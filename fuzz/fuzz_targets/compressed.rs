//! The compressed reader: whatever expands must be a stream that is the
//! canonical encoding of its tree (when it decodes), and compressing any
//! bytes must expand back to them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mpix_marshal::testing::compressed::{
    self, max_claim, HEADER_LEN, MAGIC_DEFLATE, MAGIC_VARINTS, MAX_EXPANDED,
};
use mpix_marshal::testing::external::{self, Encoding};
use mpix_marshal::testing::sink::Sink;
use mpix_marshal::{read, Representation};
use mpix_marshal_fuzz::{assert_parse_error, assert_read_error, check_decoded, resealed};

fuzz_target!(|data: &[u8]| {
    check(data);
    // The same stream with a checksum that holds (mpix_marshal_fuzz::resealed).
    if let Some(sealed) = resealed(data) {
        check(&sealed);
    }
});

fn check(data: &[u8]) {
    let parsed = read(Representation::Compressed, data);
    match compressed::expand(data, |ext| Ok(ext.to_vec())) {
        Ok(ext) => {
            assert!(ext.len() <= MAX_EXPANDED);
            // A deflated payload expands within its ratio limit (the
            // memory bound relative to the input, spec/compressed.md §3).
            if data[..4] == MAGIC_DEFLATE.to_be_bytes() {
                assert!(ext.len() <= max_claim(data.len() - HEADER_LEN));
            }
            // The varint form as is: at most 4 bytes per input byte.
            if data[..4] == MAGIC_VARINTS.to_be_bytes() {
                assert!(ext.len() <= 4 * data.len() + 12);
            }
            let tree = external::read(&ext);
            // api::read names offsets in the compressed bytes, the expanded
            // one as detail: the same verdict, the same kind of error.
            match (&tree, &parsed) {
                (Ok(a), Ok(b)) => assert!(a == b, "expand then read differs from api::read"),
                (Err(a), Err(b)) => assert!(
                    std::mem::discriminant(a) == std::mem::discriminant(b),
                    "expand then read fails otherwise than api::read: {a} / {b}"
                ),
                _ => panic!("expand then read differs from api::read"),
            }
            match tree {
                Ok(tree) => {
                    let (again, _) = check_decoded(&tree);
                    let again = again.expect("a tree read from an external stream encodes");
                    assert!(again == ext, "the expanded stream is not canonical");
                }
                Err(e) => assert_read_error(&e),
            }
            // The body alone, whatever the header's hash (as in `external`).
            if ext.len() >= external::HEADER_LEN {
                match external::read_nodes(&ext, external::HEADER_LEN, Encoding::Xdr) {
                    Ok(tree) => {
                        check_decoded(&tree);
                    }
                    Err(e) => assert_parse_error(&e),
                }
            }
        }
        Err(e) => {
            assert_parse_error(&e);
            assert!(parsed == Err(e), "expand fails, api::read does not");
        }
    }
    // The writer's side: any bytes round-trip, at most a header and a
    // checksum larger.
    let mut packed = Sink::default();
    compressed::compress(data, &mut packed).expect("compress");
    assert!(packed.len() <= data.len() + HEADER_LEN + compressed::CHECKSUM_LEN);
    let back = compressed::expand(packed.bytes(), |ext| Ok(ext.to_vec()))
        .unwrap_or_else(|e| panic!("a compressed stream does not expand: {e}"));
    assert!(back == data, "compress then expand changed the bytes");
}
