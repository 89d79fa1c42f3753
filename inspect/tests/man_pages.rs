//! The man pages mpix-marshal-man writes: one for every function and
//! callback the C header declares (found here by a scan of its own, so a
//! new function cannot go without a page), one per subcommand with its
//! examples, the hand-written ones, and the overview listing them all.

use mpix_marshal_cli::cli::{examples, EXAMPLES};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Writes every page into a fresh directory named after `test`.
fn generate(test: &str) -> PathBuf {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("man-{test}"));
    let _ = std::fs::remove_dir_all(&out);
    let o = Command::new(env!("CARGO_BIN_EXE_mpix-marshal-man"))
        .arg("--header")
        .arg(repo().join("include/mpix_marshal.h"))
        .arg("--pages")
        .arg(repo().join("man"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every function and callback type the header declares: the name before
/// the parameters' parenthesis of each line that ends with ");".
fn declared() -> Vec<String> {
    let header = read(repo().join("include/mpix_marshal.h"));
    let names: Vec<String> = header
        .lines()
        .filter(|l| l.ends_with(");") && !l.starts_with(' '))
        .filter_map(|l| {
            let head = l.split_once(")(").map_or(l, |(h, _)| h);
            let head = head
                .split('(')
                .find(|p| p.contains("MPIX_"))
                .unwrap_or(head);
            let name = head.rsplit([' ', '*', '(']).next()?;
            name.starts_with("MPIX_").then(|| name.to_string())
        })
        .collect();
    assert!(names.len() >= 20, "the scan found only {names:?}");
    names
}

#[test]
fn every_function_and_callback_of_the_header_has_its_page() {
    let out = generate("section3");
    for name in declared() {
        let page = read(out.join(format!("man3/{name}.3")));
        assert!(
            page.contains(&format!(".SH NAME\n{name} \\- ")),
            "{name}: {page}"
        );
        assert!(
            page.contains(&format!("\\fB{name}\\fR")),
            "{name}: no prototype"
        );
        assert!(page.contains(".SH DESCRIPTION\n"), "{name}");
        assert!(page.contains(".BR mpix\\-marshal (7)"), "{name}");
    }
}

#[test]
fn a_page_says_what_the_header_says() {
    let out = generate("marshal");
    let page = read(out.join("man3/MPIX_Type_marshal.3"));
    assert!(
        page.contains(
            "int \\fBMPIX_Type_marshal\\fR(const char *\\fItyperep\\fR, MPI_Datatype \\fItype\\fR,"
        ),
        "{page}"
    );
    assert!(
        page.contains("written, \\fI*num_written\\fR is set to 0"),
        "{page}"
    );
    assert!(
        page.contains(".SH SAFETY\n\\fItyperep\\fR is a NUL\\-terminated"),
        "{page}"
    );
    assert!(page.contains(".BR MPIX_Type_unmarshal (3)"), "{page}");
    let hash = read(out.join("man3/MPIX_Type_signature_hash.3"));
    assert!(
        hash.contains(".SH CONSTANTS\n.TP\n\\fBMPIX_HASH_GROPP\\fR = 1\n"),
        "{hash}"
    );
    let kind = read(out.join("man3/MPIX_Type_marshal_error_kind.3"));
    assert!(
        kind.contains("\\fBMPIX_MARSHAL_ERR_EXCHANGE\\fR = 8"),
        "{kind}"
    );
}

#[test]
fn every_subcommand_has_a_page_with_its_examples() {
    let out = generate("section1");
    for (command, list) in EXAMPLES {
        let file = match *command {
            "mpix-marshal" => "mpix-marshal.1".to_string(),
            sub => format!("mpix-marshal-{sub}.1"),
        };
        let page = read(out.join("man1").join(&file));
        assert!(
            page.contains(".SH SYNOPSIS\n") && page.contains(".SH EXAMPLES\n"),
            "{file}"
        );
        assert!(!list.is_empty(), "{command} has no example");
        for e in *list {
            assert!(
                page.contains(&e.line.replace('-', "\\-")),
                "{file}: no {:?}",
                e.line
            );
        }
    }
    let root = read(out.join("man1/mpix-marshal.1"));
    for sub in ["dump", "diff", "check", "convert", "hash", "draw"] {
        assert!(!examples(sub).is_empty(), "{sub}");
        assert!(
            root.contains(&format!("mpix\\-marshal\\-{sub}")),
            "{sub} not in {root}"
        );
    }
}

#[test]
fn the_hand_written_pages_are_filled_in_and_the_overview_lists_every_page() {
    let out = generate("overview");
    let check = read(out.join("man1/mpix-check.1"));
    let overview = read(out.join("man7/mpix-marshal.7"));
    for page in [&check, &overview] {
        assert!(!page.contains('@'), "a placeholder is left: {page}");
        assert!(page.contains(&format!("mpix-marshal {}", env!("CARGO_PKG_VERSION"))));
    }
    let see_also = overview
        .split(".SH SEE ALSO\n")
        .nth(1)
        .expect("no SEE ALSO");
    for name in declared() {
        assert!(
            see_also.contains(&format!(".BR {name} (3)")),
            "{name} not listed"
        );
    }
    assert!(see_also.contains(".BR mpix\\-check (1)"), "{see_also}");
    assert!(
        see_also.contains(".BR mpix\\-marshal\\-draw (1)"),
        "{see_also}"
    );
}

#[test]
fn help_prints_the_examples_the_pages_have() {
    let o = Command::new(env!("CARGO_BIN_EXE_mpix-marshal"))
        .args(["draw", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{help}");
    assert!(help.contains("Examples:\n"), "{help}");
    for e in examples("draw") {
        assert!(help.contains(e.line) && help.contains(e.does), "{help}");
    }
}

#[test]
fn every_reference_to_a_page_names_one_that_is_written() {
    let out = generate("references");
    let mut checked = 0;
    for section in ["1", "3", "7"] {
        let dir = out.join(format!("man{section}"));
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            for line in read(path.clone()).lines() {
                // ".BR name (N)" with an optional punctuation mark after.
                let mut words = line.split_whitespace();
                let (Some(".BR"), Some(name), Some(to)) =
                    (words.next(), words.next(), words.next())
                else {
                    continue;
                };
                let Some(to) = to.trim_end_matches([',', '.', ':', ';']).strip_prefix('(') else {
                    continue;
                };
                let Some(to) = to.strip_suffix(')').filter(|s| s.len() == 1) else {
                    continue;
                };
                let target = format!("man{to}/{}.{to}", name.replace("\\-", "-"));
                assert!(
                    out.join(&target).exists(),
                    "{}: {line}: no {target}",
                    path.display()
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "only {checked} references found");
}
