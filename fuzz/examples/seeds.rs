//! Writes the fuzz targets' seed corpora into DIR/<target>/: the golden
//! vectors (tests/golden/*.mxdt, read at run time, so a new format version
//! needs no change here) and the test corpus of tests/common, each in all
//! three representations, and corpus types again with attributes "a" and
//! "b" set. Run by scripts/fuzz.sh: `cargo run --example seeds -- DIR`.

#[path = "../../tests/common/mod.rs"]
mod common;

use mpix_marshal::testing::mpi::{self, Datatype};
use mpix_marshal::{marshal, type_tree, unmarshal, Representation};
use mpix_marshal_fuzz::{register_keyvals, set_blob, REPS};
use std::path::{Path, PathBuf};

fn is_predefined(t: Datatype) -> bool {
    type_tree(t).map_or(true, |tree| tree.is_predefined())
}

fn main() {
    let dir = PathBuf::from(std::env::args().nth(1).expect("usage: seeds DIR"));
    common::init();
    let keyvals = register_keyvals();
    let mut seeds: Vec<(String, Representation, Vec<u8>)> = Vec::new();
    let add_all = |seeds: &mut Vec<_>, what: &str, t: Datatype| {
        for rep in REPS {
            match marshal(rep, t) {
                Ok(bytes) => seeds.push((what.to_string(), rep, bytes)),
                Err(e) => eprintln!("seeds: {what} ({rep:?}) does not marshal: {e}"),
            }
        }
    };

    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/golden");
    let mut files: Vec<_> = std::fs::read_dir(&golden)
        .expect("tests/golden")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "mxdt"))
        .collect();
    files.sort();
    for path in files {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        match unmarshal(Representation::External, &bytes) {
            Ok(t) => {
                add_all(&mut seeds, &name, t);
                if !is_predefined(t) {
                    common::free(t);
                }
            }
            // Stale against the code: still a useful external seed.
            Err(e) => eprintln!("seeds: {} does not unmarshal: {e}", path.display()),
        }
        seeds.push((format!("{name}-file"), Representation::External, bytes));
    }

    // The test corpus, without its two huge cases (they would set
    // libFuzzer's input length limit to hundreds of kilobytes).
    let corpus: Vec<_> = common::corpus()
        .into_iter()
        .filter(|c| !c.name.contains("100000") && !c.name.contains("1000 members"))
        .collect();
    for c in &corpus {
        add_all(&mut seeds, &c.name, c.datatype);
    }
    for (i, c) in corpus.iter().enumerate() {
        if is_predefined(c.datatype) {
            continue;
        }
        let value = c.name.as_bytes();
        let ok = set_blob(c.datatype, keyvals[0], value) == 0
            && (i % 2 == 1 || set_blob(c.datatype, keyvals[1], &value[..value.len() / 2]) == 0);
        if ok {
            add_all(
                &mut seeds,
                &format!("{} with attributes", c.name),
                c.datatype,
            );
        }
    }

    for (i, (what, rep, bytes)) in seeds.iter().enumerate() {
        let target = match rep {
            Representation::External => "external",
            Representation::Internal => "internal",
            Representation::Compressed => "compressed",
        };
        let slug: String = what
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let file = format!("{i:04}-{slug}");
        for sub in [target, "header"] {
            let d = dir.join(sub);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(&file), bytes).unwrap();
        }
    }
    println!(
        "seeds: {} streams written to {}",
        seeds.len(),
        dir.display()
    );
    for c in corpus {
        if !is_predefined(c.datatype) {
            let _ = mpi::free(c.datatype);
        }
    }
}
