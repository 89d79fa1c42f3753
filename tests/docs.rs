//! The guide stays true to the tree: every relative link in README.md,
//! docs/, spec/ and CHANGELOG.md names an existing file, and every
//! `#anchor` a heading of that file (GitHub's slugs); every page of docs/ is
//! listed in docs/README.md; every block fenced as ```` ```c program ````
//! compiles with `$MPICC` against include/mpix_marshal.h, and one with a
//! `main` is also linked against this build's library and run (when
//! `cargo build` has made the shared library: `cargo test` alone does not).
//!
//! `cargo test` runs this in every pass of scripts/test.sh, with `MPICC` set
//! for that pass's MPI, so the guide's programs compile on each MPI of the
//! matrix (the `abi` pass: `mpicc_abi` and its `mpi.h`).

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// The repository root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A Markdown file of the guide: its path relative to the root, its text.
struct Page {
    path: PathBuf,
    text: String,
}

impl Page {
    fn line_at(&self, offset: usize) -> usize {
        self.text[..offset].matches('\n').count() + 1
    }

    fn events(&self) -> impl Iterator<Item = (Event<'_>, std::ops::Range<usize>)> {
        Parser::new_ext(&self.text, Options::ENABLE_TABLES).into_offset_iter()
    }
}

/// README.md, CHANGELOG.md, docs/**/*.md and spec/*.md.
fn guide() -> Vec<Page> {
    let mut paths = vec![PathBuf::from("README.md"), PathBuf::from("CHANGELOG.md")];
    markdown_under(Path::new("docs"), true, &mut paths);
    markdown_under(Path::new("spec"), false, &mut paths);
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(root().join(&path))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            Page { path, text }
        })
        .collect()
}

fn markdown_under(dir: &Path, recurse: bool, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name())
        .collect();
    entries.sort();
    for name in entries {
        let rel = dir.join(&name);
        if root().join(&rel).is_dir() {
            if recurse {
                markdown_under(&rel, true, out);
            }
        } else if rel.extension().is_some_and(|e| e == "md") {
            out.push(rel);
        }
    }
}

/// GitHub's anchor for a heading's text: lower case, spaces to '-', every
/// other character but letters, digits, '-' and '_' dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's headings; a repeated slug gets -1, -2, ….
fn anchors(page: &Page) -> HashSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = HashSet::new();
    let mut heading: Option<String> = None;
    for (event, _) in page.events() {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let base = slug(&heading.take().unwrap_or_default());
                let n = seen.entry(base.clone()).or_insert(0);
                out.insert(if *n == 0 {
                    base.clone()
                } else {
                    format!("{base}-{n}")
                });
                *n += 1;
            }
            _ => {}
        }
    }
    out
}

/// The page's links and images: (line, destination).
fn links(page: &Page) -> Vec<(usize, String)> {
    page.events()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                Some((page.line_at(range.start), dest_url.to_string()))
            }
            _ => None,
        })
        .collect()
}

fn is_external(dest: &str) -> bool {
    dest.contains("://") || dest.starts_with("mailto:")
}

/// `base/rel` with `.` and `..` resolved, relative to the root.
fn resolve(base: &Path, rel: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for part in base.join(rel).components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// What is wrong with one link of `page`, if anything.
fn check_link(
    page: &Page,
    dest: &str,
    anchors_of: &mut HashMap<PathBuf, HashSet<String>>,
) -> Option<String> {
    let (file, anchor) = match dest.split_once('#') {
        Some((f, a)) => (f, Some(a)),
        None => (dest, None),
    };
    let target = if file.is_empty() {
        page.path.clone()
    } else {
        resolve(page.path.parent().unwrap_or(Path::new("")), file)
    };
    if !root().join(&target).exists() {
        return Some(format!("{} does not exist", target.display()));
    }
    let anchor = anchor?;
    if !target.extension().is_some_and(|e| e == "md") {
        return Some(format!(
            "an anchor into {}, which is not Markdown",
            target.display()
        ));
    }
    let known = anchors_of.entry(target.clone()).or_insert_with(|| {
        let text = std::fs::read_to_string(root().join(&target)).unwrap();
        anchors(&Page {
            path: target.clone(),
            text,
        })
    });
    (!known.contains(anchor)).then(|| format!("{} has no heading #{anchor}", target.display()))
}

#[test]
fn every_relative_link_resolves() {
    let pages = guide();
    let mut anchors_of = HashMap::new();
    let mut checked = 0;
    let mut broken = Vec::new();
    for page in &pages {
        for (line, dest) in links(page) {
            if is_external(&dest) {
                continue;
            }
            checked += 1;
            if let Some(why) = check_link(page, &dest, &mut anchors_of) {
                broken.push(format!(
                    "{}:{line}: link ({dest}): {why}",
                    page.path.display()
                ));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(
        checked > 50,
        "only {checked} relative links found: is the guide there?"
    );
    println!("{checked} relative links in {} files resolve", pages.len());
}

/// Every page of docs/ (but drafts under a folder starting with '_') is
/// in the guide's table of contents.
#[test]
fn every_docs_page_is_in_the_table_of_contents() {
    let pages = guide();
    let index = pages
        .iter()
        .find(|p| p.path == Path::new("docs/README.md"))
        .expect("docs/README.md");
    let listed: HashSet<PathBuf> = links(index)
        .into_iter()
        .map(|(_, d)| resolve(Path::new("docs"), d.split('#').next().unwrap()))
        .collect();
    let missing: Vec<_> = pages
        .iter()
        .filter(|p| p.path.starts_with("docs") && p.path != index.path)
        .filter(|p| {
            !p.path
                .components()
                .any(|c| c.as_os_str().to_string_lossy().starts_with('_'))
        })
        .filter(|p| !listed.contains(&p.path))
        .map(|p| p.path.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "not listed in docs/README.md: {}",
        missing.join(", ")
    );
}

/// A ```` ```c program ```` block: where it starts and its source.
struct Program {
    page: PathBuf,
    line: usize,
    source: String,
}

fn programs(page: &Page) -> Vec<Program> {
    let mut out = Vec::new();
    let mut current: Option<Program> = None;
    for (event, range) in page.events() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info)))
                if info.split_whitespace().collect::<Vec<_>>() == ["c", "program"] =>
            {
                // The code starts on the line after the fence.
                let line = page.line_at(range.start) + 1;
                current = Some(Program {
                    page: page.path.clone(),
                    line,
                    source: String::new(),
                });
            }
            Event::Text(t) => {
                if let Some(p) = current.as_mut() {
                    p.source.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => out.extend(current.take()),
            _ => {}
        }
    }
    out
}

/// `$MPICC`, which must then exist; else mpicc.mpich or mpicc, if either does.
fn mpicc() -> Option<String> {
    let runs = |cc: &str| Command::new(cc).arg("--version").output().is_ok();
    if let Ok(cc) = std::env::var("MPICC") {
        assert!(runs(&cc), "MPICC={cc} does not run");
        return Some(cc);
    }
    ["mpicc.mpich", "mpicc"]
        .into_iter()
        .find(|cc| runs(cc))
        .map(String::from)
}

/// The directory of this build's libmpix_marshal.so: the test binary is in
/// its deps/ folder.
fn library_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?.parent()?.to_path_buf();
    dir.join("libmpix_marshal.so").exists().then_some(dir)
}

fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!("{cmd:?}: {}\n{text}", out.status))
    }
}

/// Compiles one block (errors name the Markdown file and line); links and
/// runs it when it has a main and the library is built.
fn build_and_run(
    cc: &str,
    program: &Program,
    out: &Path,
    lib: Option<&Path>,
) -> Result<(), String> {
    let name = format!(
        "{}-{}",
        program.page.display().to_string().replace(['/', '.'], "_"),
        program.line
    );
    let src = out.join(format!("{name}.c"));
    let text = format!(
        "#line {} \"{}\"\n{}",
        program.line,
        program.page.display(),
        program.source
    );
    std::fs::write(&src, text).map_err(|e| e.to_string())?;
    let include = root().join("include");
    let flags = ["-std=c99", "-Wall", "-Wextra", "-Werror"];
    run(Command::new(cc)
        .args(flags)
        .arg("-I")
        .arg(&include)
        .arg("-c")
        .arg(&src)
        .arg("-o")
        .arg(out.join(format!("{name}.o"))))?;
    let (Some(lib), true) = (lib, program.source.contains("main(")) else {
        return Ok(());
    };
    let exe = out.join(&name);
    let mut rpath = std::ffi::OsString::from("-Wl,-rpath,");
    rpath.push(lib);
    run(Command::new(cc)
        .args(flags)
        .arg("-I")
        .arg(&include)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(lib)
        .arg("-lmpix_marshal")
        .arg(rpath))?;
    let printed = run(&mut Command::new(&exe))?;
    println!(
        "{}:{} ran: {}",
        program.page.display(),
        program.line,
        printed.trim()
    );
    Ok(())
}

#[test]
fn every_c_program_of_the_guide_compiles() {
    let programs: Vec<Program> = guide().iter().flat_map(programs).collect();
    assert!(
        programs
            .iter()
            .any(|p| p.page == Path::new("README.md") && p.source.contains("main(")),
        "README.md has no ```c program block with a main (its quick start)"
    );
    let Some(cc) = mpicc() else {
        println!("skipped: no MPI compiler (MPICC unset, no mpicc.mpich or mpicc): {} C programs not compiled", programs.len());
        return;
    };
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("docs-programs");
    std::fs::create_dir_all(&out).unwrap();
    let lib = library_dir();
    if lib.is_none() {
        println!("libmpix_marshal.so not built: programs compiled, not linked");
    }
    let failures: Vec<String> = programs
        .iter()
        .filter_map(|p| {
            build_and_run(&cc, p, &out, lib.as_deref())
                .err()
                .map(|e| format!("{}:{}: {e}", p.page.display(), p.line))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "C programs of the guide that fail with {cc}:\n{}",
        failures.join("\n\n")
    );
    println!("{} C programs compiled with {cc}", programs.len());
}
