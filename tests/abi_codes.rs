//! The format's portable codes are the MPI-5.0 standard ABI's values
//! (src/format/codes.rs, spec/external.md §7): checked against the ABI
//! header MPICH 5 ships, `mpi_abi.h`, which defines every predefined
//! datatype handle as a fixed integer and every combiner as a fixed enum
//! value. A code that disagrees, an ABI datatype or combiner the format
//! lacks, or a format code in the ABI's range that the ABI does not define
//! fails the test.
//!
//! On the `abi` build the MPI itself answers too: `MPI_Type_toint` of
//! every predefined handle the library knows must be its code.
//!
//! The header is `$MPIX_ABI_HEADER`, else `include/mpi_abi.h` of the MPI
//! build's prefix (`$MPIX_MPI_PREFIX`, scripts/mpi-env.sh), else of the
//! MPICH 5 wheel scripts/setup.sh installs (target/mpi/mpich5). Without
//! any, the test is skipped with a message, unless `$MPIX_MPI` is set
//! (a run of scripts/test.sh, where setup.sh installed it): then it fails.

mod common;
use mpix_marshal::testing::codes::{Combiner, PREDEFINED};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn header() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("MPIX_ABI_HEADER").map(PathBuf::from),
        std::env::var_os("MPIX_MPI_PREFIX").map(|p| PathBuf::from(p).join("include/mpi_abi.h")),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/mpi/mpich5/include/mpi_abi.h")),
    ];
    candidates.into_iter().flatten().find(|p| p.is_file())
}

fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => i64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// `#define MPI_X ((MPI_Datatype)0x...)`: name -> value.
fn datatypes(text: &str) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("#define") {
            continue;
        }
        let (Some(name), Some(value)) = (words.next(), words.next()) else {
            continue;
        };
        if let Some(v) = value
            .strip_prefix("((MPI_Datatype)")
            .and_then(|v| v.strip_suffix("))").or_else(|| v.strip_suffix(")")))
            .and_then(parse_int)
        {
            out.insert(name.to_string(), v);
        }
    }
    out
}

/// `MPI_COMBINER_X = N,` inside the enum: name -> value.
fn combiners(text: &str) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim().trim_end_matches(',');
        if let Some((name, value)) = line.split_once('=') {
            let name = name.trim();
            if name.starts_with("MPI_COMBINER_") {
                if let Some(v) = parse_int(value) {
                    out.insert(name.to_string(), v);
                }
            }
        }
    }
    out
}

#[test]
fn predefined_and_combiner_codes_are_the_mpi5_abi_values() {
    let Some(path) = header() else {
        assert!(
            std::env::var_os("MPIX_MPI").is_none(),
            "no mpi_abi.h: scripts/setup.sh installs MPICH 5 into target/mpi/mpich5"
        );
        eprintln!("skipped: no mpi_abi.h (set MPIX_ABI_HEADER, or run scripts/setup.sh)");
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap();
    let abi = datatypes(&text);
    assert!(
        abi.len() > 60,
        "{}: only {} datatypes parsed",
        path.display(),
        abi.len()
    );
    let mut wrong = Vec::new();
    // Every code of ours in the ABI's range is the ABI's value of that name.
    for &(code, name) in PREDEFINED {
        if !(0x200..0x300).contains(&code) {
            continue;
        }
        match abi.get(name) {
            Some(&v) if v == i64::from(code) => {}
            Some(&v) => wrong.push(format!("{name}: ours {code:#x}, the ABI's {v:#x}")),
            None => wrong.push(format!("{name}: ours {code:#x}, not in the ABI")),
        }
    }
    // Every ABI datatype has its code among ours (but MPI_DATATYPE_NULL).
    for (name, &v) in &abi {
        if name == "MPI_DATATYPE_NULL" {
            assert_eq!(v, 0x200);
            continue;
        }
        if !PREDEFINED
            .iter()
            .any(|&(c, n)| n == name && i64::from(c) == v)
        {
            wrong.push(format!("{name} ({v:#x}): in the ABI, not in the format"));
        }
    }
    // Combiners: every ABI combiner is ours with the same code.
    let abi_combiners = combiners(&text);
    assert!(abi_combiners.len() >= 17, "{abi_combiners:?}");
    for (name, &v) in &abi_combiners {
        match Combiner::ALL.iter().find(|c| c.mpi_name() == name) {
            Some(c) if i64::from(c.code()) == v => {}
            Some(c) => wrong.push(format!("{name}: ours {}, the ABI's {v}", c.code())),
            None => wrong.push(format!("{name} ({v}): in the ABI, not in the format")),
        }
    }
    for c in Combiner::ALL {
        if c.code() <= 117 && !abi_combiners.contains_key(c.mpi_name()) {
            wrong.push(format!(
                "{}: ours {}, not in the ABI",
                c.mpi_name(),
                c.code()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "codes disagree with {}:\n{}",
        path.display(),
        wrong.join("\n")
    );
    println!(
        "{} datatypes and {} combiners agree with {}",
        abi.len() - 1,
        abi_combiners.len(),
        path.display()
    );
}

/// The MPI-5 ABI build: `MPI_Type_toint` (MPI 5.0 requires it to return a
/// predefined handle's ABI value) agrees with every code of ours in the
/// ABI's range that the MPI defines, and `MPI_Type_fromint` goes back.
#[cfg(feature = "abi")]
#[test]
fn mpi_type_toint_gives_our_codes() {
    use mpix_marshal::testing::codes::Predefined;
    use mpix_marshal::testing::mpi::{self, sys};
    common::init();
    let local = mpi::local();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for &(code, name) in PREDEFINED {
        if !(0x200..0x300).contains(&code) {
            continue;
        }
        let Some(t) = local.datatype(Predefined(code)) else {
            continue;
        };
        // SAFETY: t is a predefined handle of the running MPI.
        let (i, back) = unsafe {
            let i = sys::MPI_Type_toint(t);
            (i, sys::MPI_Type_fromint(i))
        };
        if i != i32::from(code) || mpi::handle_bits(back) != mpi::handle_bits(t) {
            wrong.push(format!("{name}: MPI_Type_toint {i:#x}, ours {code:#x}"));
        }
        checked += 1;
    }
    assert!(checked > 60, "only {checked} predefined types checked");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    println!("MPI_Type_toint agrees with {checked} codes");
}
