//! The external reader on raw bytes. A stream that decodes must be the one
//! encoding of its tree (spec/external.md §2) and re-encode to that tree.
//! The header holds the tree's signature hash, which a mutated body rarely
//! keeps, so the body is also parsed on its own (`read_nodes`): when it
//! parses, the writer's stream for its tree must read back to it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mpix_marshal::testing::external::{self, Encoding, HEADER_LEN};
use mpix_marshal_fuzz::{assert_parse_error, assert_read_error, check_decoded, resealed};

fuzz_target!(|data: &[u8]| {
    check(data);
    // The same stream with a checksum that holds (mpix_marshal_fuzz::resealed).
    if let Some(sealed) = resealed(data) {
        check(&sealed);
    }
});

fn check(data: &[u8]) {
    match external::read(data) {
        Ok(tree) => {
            let (ext, _) = check_decoded(&tree);
            let ext = ext.expect("a tree read from an external stream encodes");
            assert!(
                ext == data,
                "a stream that decodes is not its tree's canonical encoding"
            );
        }
        Err(e) => {
            assert_read_error(&e);
            // Errors name a byte of the input.
            if let Some(offset) = e.offset() {
                assert!(offset <= data.len(), "error offset {offset} past the input");
            }
        }
    }
    // The body: the nodes after the header, before the checksum of a
    // checksummed stream.
    let body = match data.get(..4) {
        Some(b"MXCT") if data.len() >= HEADER_LEN + 4 => &data[..data.len() - 4],
        _ => data,
    };
    if body.len() >= HEADER_LEN {
        match external::read_nodes(body, HEADER_LEN, Encoding::Xdr) {
            Ok(tree) => {
                if let (Some(ext), _) = check_decoded(&tree) {
                    assert!(
                        ext[HEADER_LEN..ext.len() - 4] == body[HEADER_LEN..],
                        "a body that decodes is not its tree's canonical encoding"
                    );
                }
            }
            Err(e) => assert_parse_error(&e),
        }
    }
}
