//! The command's subcommands, run as a user runs them: output (golden text
//! where it is stable across MPIs), exit statuses, error messages.

mod fixtures;

use fixtures::*;
use mpix_marshal::{HashKind, Representation};
use std::path::Path;

const GOLDEN: [&str; 6] = [
    "int",
    "contiguous_5_double",
    "halo_vector",
    "paper_indexed",
    "resized_wide",
    "struct_int_double",
];

/// Compares `got` with inspect/tests/expected/NAME (rewritten when
/// MPIX_UPDATE_GOLDEN=1).
fn expect_golden(name: &str, got: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/expected")
        .join(name);
    if std::env::var_os("MPIX_UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "{} is missing (MPIX_UPDATE_GOLDEN=1 writes it)",
            path.display()
        )
    });
    assert_eq!(got, want, "output differs from {}", path.display());
}

#[test]
fn dump_of_every_golden_vector_is_the_golden_text() {
    for g in GOLDEN {
        let o = run(&["dump", &format!("tests/golden/{g}.mxdt")]);
        assert_eq!(o.status.code(), Some(0), "{g}: {}", stderr(&o));
        expect_golden(&format!("{g}.dump"), &stdout(&o));
    }
}

#[test]
fn dump_shows_names_bounds_and_sizes_of_every_level() {
    let o = run(&["dump", &fixture("particle.mxdt")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("root: MPI_COMBINER_STRUCT \"particle\""),
        "{out}"
    );
    assert!(out.contains("blocklengths [3, 3, 1]"), "{out}");
    assert!(out.contains("displacements (bytes) [0, 24, 48]"), "{out}");
    // 7 basic elements, 52 bytes of data, true extent 52.
    assert!(out.contains("elements 7, signature hash 0x"), "{out}");
    assert!(
        out.contains("size 52, lb 0, extent 56, true lb 0, true extent 52"),
        "{out}"
    );
    assert_eq!(out.matches("types[").count(), 3, "{out}");
}

#[test]
fn dump_reads_compressed_internal_and_standard_input() {
    let ext = run(&["dump", &fixture("hdf5.mxdt")]);
    let text = stdout(&ext);
    assert!(text.contains("size 5000, lb 0, extent 200000"), "{text}");
    // The same tree, whatever the representation.
    let body = |s: &str| s.split_once("\n\n").unwrap().1.to_string();
    for f in ["hdf5.mxdz", "hdf5.mxdi"] {
        let o = run(&["dump", &fixture(f)]);
        assert_eq!(o.status.code(), Some(0), "{f}: {}", stderr(&o));
        assert_eq!(body(&stdout(&o)), body(&text), "{f}");
    }
    assert!(stdout(&run(&["dump", &fixture("hdf5.mxdz")])).contains("representation  compressed"));
    assert!(stdout(&run(&["dump", &fixture("hdf5.mxdi")])).contains("representation  internal"));
    let bytes = std::fs::read(fixture("hdf5.mxdt")).unwrap();
    let o = run_with_input(&["dump", "-"], Some(&bytes));
    assert_eq!(body(&stdout(&o)), body(&text));
}

#[test]
fn dump_json_is_one_object_with_every_level() {
    let o = run(&["dump", "--json", &fixture("particle.mxdt")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(j["representation"], "external");
    assert_eq!(j["format_version"], 5);
    let root = &j["root"];
    assert_eq!(root["combiner"], "MPI_COMBINER_STRUCT");
    assert_eq!(root["name"], "particle");
    assert_eq!(root["size"], 52);
    assert_eq!(root["extent"], 56);
    assert_eq!(root["elements"], 7);
    assert_eq!(
        root["arguments"]["displacements"],
        serde_json::json!([0, 24, 48])
    );
    let kids = root["children"].as_array().unwrap();
    assert_eq!(kids.len(), 3);
    assert_eq!(kids[2]["predefined"], "MPI_INT");
    assert_eq!(kids[2]["role"], "types[2]");
    // Element counts past 2^64 are strings; 10^9 is a number.
    let o = run(&["dump", "--json", &fixture("billion.mxdt")]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["root"]["elements"], 1_000_000_000u64);
}

#[test]
fn diff_exit_status_is_0_equal_1_different_2_error() {
    let a = fixture("listing1_a.mxdt");
    let b = fixture("listing1_b.mxdt");
    // The same type in two representations is equal at every level.
    let o = run(&["diff", &fixture("hdf5.mxdt"), &fixture("hdf5.mxdz")]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(stdout(&o), "equal up to the attributes level\n");
    // Listing 1: equal signatures, typemaps of different extents.
    let o = run(&["diff", "--level", "signature", &a, &b]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&["diff", &a, &b]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.starts_with("typemap level: "), "{out}");
    assert!(out.contains("extent"), "{out}");
    let o = run(&["diff", "-q", &a, &b]);
    assert_eq!((o.status.code(), o.stdout.len()), (Some(1), 0));
    // Different basic types: the signature level, with both paths.
    let o = run(&[
        "diff",
        "tests/golden/int.mxdt",
        "tests/golden/contiguous_5_double.mxdt",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o)
        .starts_with("signature level: the signatures differ at element 0: MPI_INT vs MPI_DOUBLE"));
    // Names differ only at the names level.
    let o = run(&[
        "diff",
        "--level",
        "constructor",
        "tests/golden/struct_int_double.mxdt",
        "tests/golden/struct_int_double.mxdt",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let o = run(&["diff", &a, "no/such/file.mxdt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no/such/file.mxdt: No such file"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn check_gives_the_byte_offset_and_item_of_a_corrupt_stream() {
    let o = run(&["check", "tests/golden/halo_vector.mxdt"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "tests/golden/halo_vector.mxdt: valid external stream, format version 5, 44 bytes, checksum CRC-32C 0x0d40c3d5 verified, root MPI_COMBINER_VECTOR; rebuilt on this MPI\n"
    );
    let good = std::fs::read(golden("halo_vector.mxdt")).unwrap();
    // Every truncation is refused with exit status 1 and a byte offset.
    for n in 0..good.len() {
        let o = run_with_input(&["check", "-"], Some(&good[..n]));
        assert_eq!(o.status.code(), Some(1), "cut at {n}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.starts_with("mpix-marshal: invalid: -: "), "{err}");
        assert!(err.contains("at byte"), "cut at {n}: {err}");
    }
    // A flipped bit of the signature hash: the checksum says so first.
    let mut bad = good.clone();
    bad[11] ^= 1;
    let o = run_with_input(&["check", "-"], Some(&bad));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(
            "checksum mismatch: the stream's CRC-32C (at byte 40) is 0x0d40c3d5, its bytes give 0x"
        ),
        "{}",
        stderr(&o)
    );
    let o = run_with_input(&["check", "-"], Some(b"PNG\x89 not a stream"));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("at byte 0: the magic word"),
        "{}",
        stderr(&o)
    );
    let o = run(&["check", "missing.mxdt"]);
    assert_eq!(o.status.code(), Some(2));
}

/// A stream without a checksum (the version-4 golden vector) is valid, and
/// `check` says it has none; `--strict` refuses it, and passes a stream
/// that has one. A compressed stream's error names its own offset.
#[test]
fn check_strict_refuses_a_stream_without_a_checksum() {
    let v4 = "tests/golden/v4/halo_vector.mxdt";
    let o = run(&["check", v4]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        format!("{v4}: valid external stream, format version 4, 40 bytes, no checksum, root MPI_COMBINER_VECTOR; rebuilt on this MPI\n")
    );
    let o = run(&["check", "--strict", v4]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("no checksum") && stderr(&o).contains("--strict refuses"),
        "{}",
        stderr(&o)
    );
    let o = run(&["check", "--strict", "tests/golden/halo_vector.mxdt"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("verified"), "{}", stdout(&o));
    // A version-3 compressed stream (MXDP) cut short: the error names a
    // byte of the 20 bytes given, and the expanded offset as detail.
    let ext = std::fs::read(golden("v4/halo_vector.mxdt")).unwrap();
    let mut old = b"MXDP".to_vec();
    old.extend_from_slice(&ext[4..12]);
    for w in ext[12..].chunks(4) {
        let mut v = u32::from_be_bytes(w.try_into().unwrap());
        while v >= 0x80 {
            old.push(v as u8 | 0x80);
            v >>= 7;
        }
        old.push(v as u8);
    }
    let o = run_with_input(&["check", "--from", "compressed", "-"], Some(&old));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("no checksum"), "{}", stdout(&o));
    let cut = &old[..old.len() - 4];
    let o = run_with_input(&["check", "--from", "compressed", "-"], Some(cut));
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let err = stderr(&o);
    let at: usize = err
        .split("at byte ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no offset: {err}"));
    assert!(
        at <= cut.len(),
        "offset {at} past the {} bytes: {err}",
        cut.len()
    );
    assert!(err.contains("of the expanded external stream"), "{err}");
}

#[test]
fn convert_round_trips_byte_for_byte() {
    init();
    let out = dir().join("converted");
    std::fs::create_dir_all(&out).unwrap();
    for g in GOLDEN {
        let ext = std::fs::read(golden(&format!("{g}.mxdt"))).unwrap();
        let z = out.join(format!("{g}.mxdz"));
        let back = out.join(format!("{g}.mxdt"));
        let o = run(&[
            "convert",
            "--to",
            "compressed",
            &golden(&format!("{g}.mxdt")).display().to_string(),
            &z.display().to_string(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        // What the library writes for the type, in that representation.
        let t = mpix_marshal::unmarshal(Representation::External, &ext).unwrap();
        assert_eq!(
            std::fs::read(&z).unwrap(),
            mpix_marshal::marshal(Representation::Compressed, t).unwrap(),
            "{g}"
        );
        let o = run(&[
            "convert",
            "--to",
            "external",
            &z.display().to_string(),
            &back.display().to_string(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(std::fs::read(&back).unwrap(), ext, "{g}");
    }
    // To standard output.
    let o = run(&["convert", "--to", "external", &fixture("hdf5.mxdi"), "-"]);
    assert_eq!(o.stdout, std::fs::read(fixture("hdf5.mxdt")).unwrap());
}

#[test]
fn hash_of_every_family_is_the_library_s() {
    init();
    let o = run(&["hash", "--kind", "all", "tests/golden/paper_indexed.mxdt"]);
    assert_eq!(o.status.code(), Some(0));
    expect_golden("paper_indexed.hash", &stdout(&o));
    let t = mpix_marshal::unmarshal(
        Representation::External,
        &std::fs::read(fixture("hdf5.mxdt")).unwrap(),
    )
    .unwrap();
    for (kind, arg) in HashKind::ALL.iter().zip([
        "gropp",
        "xor-bs1",
        "mmm-bs1",
        "gfd8",
        "gfd16",
        "crc32",
        "default64",
    ]) {
        let o = run(&["hash", "--kind", arg, &fixture("hdf5.mxdt")]);
        let got = u64::from_str_radix(stdout(&o).trim().trim_start_matches("0x"), 16).unwrap();
        assert_eq!(
            got,
            mpix_marshal::signature_hash(t, *kind).unwrap(),
            "{arg}"
        );
    }
}

#[test]
fn every_subcommand_has_help_and_bad_usage_is_status_2() {
    for sub in ["dump", "diff", "check", "convert", "hash", "draw"] {
        let o = run(&[sub, "--help"]);
        assert_eq!(o.status.code(), Some(0), "{sub}");
        assert!(
            stdout(&o).contains("Usage: mpix-marshal"),
            "{sub}: {}",
            stdout(&o)
        );
    }
    let o = run(&["--help"]);
    for sub in ["dump", "diff", "check", "convert", "hash", "draw"] {
        assert!(stdout(&o).contains(sub));
    }
    let o = run(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["hash", "--kind", "md5", "x"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn errors_are_messages_not_panics() {
    let o = run(&["dump", "Cargo.toml"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.starts_with("mpix-marshal: Cargo.toml: corrupt stream at byte 0: the magic word"),
        "{err}"
    );
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
    let o = run(&[
        "convert",
        "--to",
        "external",
        &fixture("hdf5.mxdt"),
        "/no/such/dir/out",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("/no/such/dir/out: No such file or directory"),
        "{}",
        stderr(&o)
    );
}
