//! `mpix-marshal-man`: writes every man page of mpix-marshal into a
//! directory (man1/, man3/, man7/), each from its one source: section 3
//! from the C header's declarations and doc comments (themselves the Rust
//! doc comments of src/capi/, through cbindgen), section 1 from the clap
//! definitions of the mpix-marshal command, and the hand-written pages of
//! man/ (mpix-check(1), the overview mpix-marshal(7)), the overview's SEE
//! ALSO listing every page. Run by scripts/install.sh and
//! scripts/man-lint.sh.

mod header;
mod roff;
mod section1;
mod section3;

use clap::Parser;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Write the man pages of mpix-marshal into a directory.
#[derive(Debug, Parser)]
#[command(name = "mpix-marshal-man")]
struct Args {
    /// The C header the section-3 pages come from.
    #[arg(long, default_value = "include/mpix_marshal.h")]
    header: PathBuf,
    /// The directory of the hand-written pages (NAME.SECTION).
    #[arg(long, default_value = "man")]
    pages: PathBuf,
    /// Where to write: DIR/man1, DIR/man3, DIR/man7 (made if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

#[derive(Debug, thiserror::Error)]
enum ManError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Header {
        path: PathBuf,
        source: header::HeaderError,
    },
    #[error("{path}: not NAME.SECTION with SECTION 1, 3 or 7")]
    PageName { path: PathBuf },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ManError + '_ {
    move |source| ManError::Io {
        path: path.to_path_buf(),
        source,
    }
}

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(n) => {
            println!("mpix-marshal-man: {n} pages");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mpix-marshal-man: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Writes every page; returns how many.
fn run(args: &Args) -> Result<usize, ManError> {
    let text = std::fs::read_to_string(&args.header).map_err(io(&args.header))?;
    let items = header::parse(&text).map_err(|source| ManError::Header {
        path: args.header.clone(),
        source,
    })?;
    let date = roff::date();
    let mut pages: Vec<(String, String)> = Vec::new(); // (file, text)
    pages.extend(
        items
            .iter()
            .filter_map(|i| section3::page(i, &items, &date, VERSION)),
    );
    pages.extend(section1::pages(&date, VERSION).map_err(io(&args.out))?);
    for (file, text) in hand_written(&args.pages)? {
        let text = text.replace("@DATE@", &date).replace("@VERSION@", VERSION);
        pages.push((file, text));
    }
    let listed = see_also_of_everything(&pages);
    for (file, text) in &mut pages {
        if file == "mpix-marshal.7" {
            *text += &roff::see_also(&listed);
        }
    }
    for (file, text) in &pages {
        let section = section_of(file).unwrap_or("1");
        let dir = args.out.join(format!("man{section}"));
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let path = dir.join(file);
        std::fs::write(&path, text).map_err(io(&path))?;
    }
    Ok(pages.len())
}

fn section_of(file: &str) -> Option<&str> {
    file.rsplit_once('.')
        .map(|(_, s)| s)
        .filter(|s| ["1", "3", "7"].contains(s))
}

/// The pages of `dir`, sorted by name.
fn hand_written(dir: &Path) -> Result<Vec<(String, String)>, ManError> {
    let mut pages = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let path = entry.map_err(io(dir))?.path();
        let file = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        if section_of(&file).is_none() {
            return Err(ManError::PageName { path });
        }
        pages.push((file, std::fs::read_to_string(&path).map_err(io(&path))?));
    }
    pages.sort();
    Ok(pages)
}

/// Every page but the overview, sections 1, 3 in order.
fn see_also_of_everything(pages: &[(String, String)]) -> Vec<(String, String)> {
    let mut list: Vec<(String, String)> = pages
        .iter()
        .filter(|(f, _)| f != "mpix-marshal.7")
        .filter_map(|(f, _)| f.rsplit_once('.'))
        .map(|(name, s)| (s.to_string(), name.to_string()))
        .collect();
    list.sort();
    list.into_iter().map(|(s, name)| (name, s)).collect()
}
