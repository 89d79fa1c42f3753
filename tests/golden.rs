//! Golden vectors, tested both ways: the code writes exactly the checked-in
//! bytes for each type, and reads them back into the type's own tree. The
//! worked examples of spec/external.md §11 are checked against the same
//! files. `MPIX_UPDATE_GOLDEN=1` rewrites the files (review the diff).
//! The vectors of earlier versions (tests/golden/v4/, and the version-3
//! compressed examples) are read-only: read and checked, no longer written.

mod common;
use common::*;
use mpix_marshal::testing::external;
use mpix_marshal::testing::mpi::Datatype;
use mpix_marshal::{marshal, stream_checksum, type_tree, unmarshal, Representation};
use std::path::Path;

fn cases() -> Vec<(&'static str, &'static str, Datatype)> {
    vec![
        ("int.mxdt", "11.1", named("MPI_INT")),
        (
            "contiguous_5_double.mxdt",
            "11.2",
            contiguous(5, named("MPI_DOUBLE")),
        ),
        ("paper_indexed.mxdt", "11.3", paper_indexed()),
        (
            "halo_vector.mxdt",
            "11.4",
            set_name(vector(4, 1, 8, named("MPI_DOUBLE")), "halo"),
        ),
        (
            "resized_wide.mxdt",
            "11.5",
            resized(named("MPI_INT"), -8, 1 << 32),
        ),
        (
            "struct_int_double.mxdt",
            "11.6",
            structure(&[1, 1], &[0, 8], &[named("MPI_INT"), named("MPI_DOUBLE")]),
        ),
    ]
}

/// The hex words of the first code block of spec section `number`.
fn spec_bytes(spec: &str, number: &str) -> Vec<u8> {
    let start = spec
        .find(&format!("### {number} "))
        .unwrap_or_else(|| panic!("spec section {number} is missing"));
    let block = spec[start..].split("```").nth(1).expect("a code block");
    let mut out = Vec::new();
    for line in block.lines() {
        for word in line.split_whitespace() {
            if word.len() != 8 || !word.chars().all(|c| c.is_ascii_hexdigit()) {
                break;
            }
            out.extend_from_slice(&u32::from_str_radix(word, 16).unwrap().to_be_bytes());
        }
    }
    out
}

#[test]
fn golden_vectors_both_ways() {
    init();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let spec =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/external.md"))
            .unwrap();
    for (file, section, t) in cases() {
        let written = marshal(Representation::External, t).unwrap();
        let path = dir.join(file);
        if std::env::var_os("MPIX_UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, &written).unwrap();
        }
        let golden =
            std::fs::read(&path).unwrap_or_else(|_| panic!("{} is missing", path.display()));
        assert_eq!(
            written, golden,
            "{file}: the code writes other bytes than the golden file"
        );
        let back = unmarshal(Representation::External, &golden).unwrap();
        assert_eq!(
            type_tree(back).unwrap(),
            type_tree(t).unwrap(),
            "{file}: reads back into another tree"
        );
        if std::env::var_os("MPIX_UPDATE_GOLDEN").is_some() {
            continue; // the spec is edited by hand, after the files
        }
        assert_eq!(
            spec_bytes(&spec, section),
            golden,
            "{file}: spec/external.md §{section} shows other bytes"
        );
        free(back);
        free(t);
    }
}

/// The hex bytes (pairs) of the first code block of spec/compressed.md
/// section `number`.
fn spec_hex(spec: &str, number: &str) -> Vec<u8> {
    let start = spec
        .find(&format!("### {number} "))
        .unwrap_or_else(|| panic!("spec/compressed.md section {number} is missing"));
    let block = spec[start..].split("```").nth(1).expect("a code block");
    block
        .lines()
        .flat_map(|l| l.split('#').next().unwrap().split_whitespace())
        .map(|b| u8::from_str_radix(b, 16).expect("hex byte pairs"))
        .collect()
}

/// The compressed examples of spec/compressed.md §4, both ways: the code
/// writes exactly those bytes (the varint form, MXDP, for these small
/// types) and reads them back into the type's tree.
#[test]
fn compressed_examples_both_ways() {
    init();
    let spec =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/compressed.md"))
            .unwrap();
    for (section, t) in [("4.1", named("MPI_INT")), ("4.2", paper_indexed())] {
        let written = marshal(Representation::Compressed, t).unwrap();
        if std::env::var_os("MPIX_SHOW_COMPRESSED").is_some() {
            let hex: Vec<String> = written.iter().map(|b| format!("{b:02x}")).collect();
            println!("{section}: {}", hex.join(" "));
            continue;
        }
        assert_eq!(
            written,
            spec_hex(&spec, section),
            "spec/compressed.md §{section} shows other bytes"
        );
        let back = unmarshal(Representation::Compressed, &written).unwrap();
        assert_eq!(
            type_tree(back).unwrap(),
            type_tree(t).unwrap(),
            "§{section}"
        );
        free(back);
        free(t);
    }
}

/// CRC-32C is the checksum: its check value (the CRC of "123456789",
/// RFC 3720 B.4 and every CRC catalogue), and the checksum of each golden
/// vector is that function of its other bytes.
#[test]
fn the_checksum_is_crc32c() {
    assert_eq!(external::checksum(b"123456789"), 0xe306_9283);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    for (file, _, _) in cases() {
        let v5 = std::fs::read(dir.join(file)).unwrap();
        let (body, crc) = v5.split_at(v5.len() - 4);
        assert_eq!(
            external::checksum(body).to_be_bytes(),
            crc,
            "{file}: its last word is not the CRC-32C of the rest"
        );
        assert_eq!(
            stream_checksum(Representation::External, &v5),
            Ok(Some(u32::from_be_bytes(crc.try_into().unwrap())))
        );
    }
}

/// The version-4 vectors (no checksum) are still read, into the same trees,
/// and `stream_checksum` says they have none. Each is its version-5
/// vector with magic "MXDT", version 4 and no checksum: the node grammar
/// did not change.
#[test]
fn version_4_vectors_are_still_read() {
    init();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    for (file, _, t) in cases() {
        let v4 = std::fs::read(dir.join("v4").join(file)).unwrap();
        assert_eq!(&v4[..4], b"MXDT", "{file}");
        assert_eq!(v4[4] >> 5, 4, "{file}: version 4");
        assert_eq!(stream_checksum(Representation::External, &v4), Ok(None));
        let back = unmarshal(Representation::External, &v4).unwrap();
        assert_eq!(
            type_tree(back).unwrap(),
            type_tree(t).unwrap(),
            "{file}: the version-4 vector reads back into another tree"
        );
        let v5 = std::fs::read(dir.join(file)).unwrap();
        let mut as_v4 = v5[..v5.len() - 4].to_vec();
        as_v4[..4].copy_from_slice(b"MXDT");
        as_v4[4] = as_v4[4] & 0x1f | 4 << 5;
        assert_eq!(as_v4, v4, "{file}: version 5 is version 4 and a checksum");
        free(back);
        free(t);
    }
}

/// Version 3's compressed examples (no checksum; a version-4 external
/// stream inside) are still read: spec/compressed.md §4.3 and §4.4.
#[test]
fn version_3_compressed_examples_are_still_read() {
    init();
    let spec =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/compressed.md"))
            .unwrap();
    for (section, t) in [("4.3", named("MPI_INT")), ("4.4", paper_indexed())] {
        let old = spec_hex(&spec, section);
        assert_eq!(&old[..4], b"MXDP", "§{section}");
        assert_eq!(stream_checksum(Representation::Compressed, &old), Ok(None));
        let back = unmarshal(Representation::Compressed, &old).unwrap();
        assert_eq!(
            type_tree(back).unwrap(),
            type_tree(t).unwrap(),
            "§{section}"
        );
        free(back);
        free(t);
    }
}
