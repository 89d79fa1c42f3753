//! Section 1: mpix-marshal(1) and one page per subcommand
//! (mpix-marshal-dump(1) and so on), made by clap_mangen from the clap
//! definitions (inspect/src/cli.rs), with their examples from the same
//! file.

use clap::CommandFactory;
use clap_mangen::Man;
use mpix_marshal_cli::cli::{examples, Cli};

use crate::roff;

/// Every page: file name ("mpix-marshal-dump.1") and roff text.
pub fn pages(date: &str, version: &str) -> std::io::Result<Vec<(String, String)>> {
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    let subcommands: Vec<clap::Command> = root
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    let page_of = |s: &clap::Command| s.get_display_name().unwrap_or(s.get_name()).to_string();
    let mut pages = Vec::new();
    let mut root_see: Vec<(String, String)> = subcommands
        .iter()
        .map(|s| (page_of(s), "1".to_string()))
        .collect();
    root_see.push(("mpix-marshal".into(), "7".into()));
    pages.push(page(&root, "mpix-marshal", date, version, &root_see)?);
    for sub in &subcommands {
        let see = [
            ("mpix-marshal".to_string(), "1".to_string()),
            ("mpix-marshal".into(), "7".into()),
        ];
        pages.push(page(sub, sub.get_name(), date, version, &see)?);
    }
    Ok(pages)
}

/// One page: clap_mangen's sections, then EXAMPLES and SEE ALSO.
fn page(
    cmd: &clap::Command,
    examples_of: &str,
    date: &str,
    version: &str,
    see: &[(String, String)],
) -> std::io::Result<(String, String)> {
    // The command's one-line about starts "mpix-marshal: ", which the
    // NAME line says already.
    let name = cmd.get_display_name().unwrap_or(cmd.get_name()).to_string();
    let mut cmd = cmd.clone();
    if let Some(about) = cmd.get_about().map(|a| a.to_string()) {
        let about = about
            .strip_prefix(&format!("{name}: "))
            .unwrap_or(&about)
            .to_string();
        cmd = cmd.about(about);
    }
    let man = Man::new(cmd.clone())
        .title(&name)
        .section("1")
        .date(date)
        .source(format!("mpix-marshal {version}"))
        .manual("User Commands");
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out)?;
    }
    if cmd.has_subcommands() {
        man.render_subcommands_section(&mut out)?;
    }
    let mut text = tidy(&String::from_utf8(out).map_err(std::io::Error::other)?);
    text += &examples_section(examples_of);
    text += &roff::see_also(see);
    Ok((man.get_filename(), text))
}

/// clap_mangen sets an empty line between two `.br` before a list of
/// possible values, which mandoc flags (a paragraph macro skipped): one
/// `.sp` is the same space.
fn tidy(text: &str) -> String {
    text.replace("\n.br\n\n.br\n", "\n.sp\n")
}

fn examples_section(command: &str) -> String {
    let mut out = String::from(".SH EXAMPLES\n");
    for e in examples(command) {
        out += &format!(
            ".TP\n.B {}\n{}\n",
            roff::escape(e.line),
            roff::escape(e.does)
        );
    }
    out
}
