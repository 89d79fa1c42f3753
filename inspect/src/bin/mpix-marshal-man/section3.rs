//! Section 3: a page for every function and callback type of the header,
//! made from its declaration and doc comment alone.

use crate::header::{Item, Kind, Prototype};
use crate::roff::{self, Font};

/// Columns a SYNOPSIS line may take: 80 less the page's indentation.
const SYNOPSIS_WIDTH: usize = 72;

/// The page of `item` (a function or a callback), given every item of
/// the header: file name ("MPIX_Type_marshal.3") and roff text.
pub fn page(item: &Item, all: &[Item], date: &str, version: &str) -> Option<(String, String)> {
    let proto = item.prototype.as_ref()?;
    let params = proto.param_names();
    let font_of = |code: &str| {
        if params.contains(&code.trim_start_matches('*')) {
            Font::Italic
        } else {
            Font::Bold
        }
    };
    let (description, headed) = split_sections(&item.doc);
    let mut out = roff::title(&item.name, "3", date, version, manual(&item.name));
    out += &format!(
        ".SH NAME\n{} \\- {}\n",
        roff::escape(&item.name),
        roff::escape(&summary(&item.doc))
    );
    out += ".SH SYNOPSIS\n.nf\n.B #include <mpix_marshal.h>\n.PP\n";
    out += &synopsis(&item.name, proto);
    out += ".fi\n.PP\nLink with \\fB\\-lmpix_marshal\\fR (\\fBpkg\\-config \\-\\-libs mpix\\-marshal\\fR).\n";
    out += ".SH DESCRIPTION\n";
    out += &paragraphs(&description, &font_of);
    for (heading, body) in &headed {
        out += &format!(".SH {}\n", roff::escape(&heading.to_uppercase()));
        out += &paragraphs(body, &font_of);
    }
    out += &constants(item, all);
    if item.kind == Kind::Function {
        out += RETURN_VALUE;
    }
    out += &roff::see_also(&see_also(item, all));
    Some((format!("{}.3", item.name), out))
}

/// The manual's name for the header line, which holds NAME(3) twice and
/// it in 80 columns: none when a long name leaves no room.
fn manual(name: &str) -> &'static str {
    const MANUAL: &str = "Library Functions Manual";
    if 2 * (name.len() + 3) + MANUAL.len() + 4 <= 80 {
        MANUAL
    } else {
        ""
    }
}

const RETURN_VALUE: &str = ".SH RETURN VALUE\n\\fBMPI_SUCCESS\\fR, or an MPI error code: one of \
the library's own error classes, or an error of the MPI library passed on. \
\\fBMPIX_Type_marshal_error_kind\\fR(3) tells the kind of a code \
(\\fBMPIX_MARSHAL_ERR_*\\fR); \\fBMPI_Error_string\\fR gives its message.\n";

/// The comment's first sentence, plain (for the NAME line).
fn summary(doc: &[String]) -> String {
    let text = doc
        .iter()
        .take_while(|l| !l.is_empty())
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ")
        .replace('`', "");
    let sentence = match text.find(". ") {
        Some(end) => &text[..end],
        None => text.trim_end_matches('.'),
    };
    // A long one up to its first colon or semicolon, when it has one.
    match sentence.find([':', ';']) {
        Some(end) if sentence.len() > 72 => sentence[..end].to_string(),
        _ => sentence.to_string(),
    }
}

type Lines<'a> = Vec<&'a str>;

/// The lines before the first "# Heading", and each headed part.
fn split_sections(doc: &[String]) -> (Lines<'_>, Vec<(String, Lines<'_>)>) {
    let mut description = Vec::new();
    let mut headed: Vec<(String, Lines)> = Vec::new();
    for line in doc {
        if let Some(h) = line.strip_prefix("# ") {
            headed.push((h.to_string(), Vec::new()));
        } else if let Some((_, body)) = headed.last_mut() {
            body.push(line);
        } else {
            description.push(line.as_str());
        }
    }
    (description, headed)
}

/// Blank-line-separated paragraphs as roff, each after a `.PP`.
fn paragraphs(lines: &[&str], font_of: &dyn Fn(&str) -> Font) -> String {
    lines
        .split(|l| l.trim().is_empty())
        .filter(|p| !p.is_empty())
        .enumerate()
        .map(|(i, p)| {
            let pp = if i > 0 { ".PP\n" } else { "" };
            format!("{pp}{}", roff::paragraph(p, font_of))
        })
        .collect()
}

/// The prototype in lines of at most SYNOPSIS_WIDTH columns: the
/// parameters filled after the opening parenthesis and aligned with it,
/// or indented by 8 when that leaves too little room; the name in bold,
/// the parameter names in italics.
fn synopsis(name: &str, proto: &Prototype) -> String {
    let head = format!("{}{name}{}", proto.before, proto.open);
    let aligned = head.len() + longest(&proto.params) + 2 <= SYNOPSIS_WIDTH;
    let indent = if aligned { head.len() } else { 8 };
    // lines[0] follows the head; when not aligned it stays empty.
    let mut lines: Vec<Vec<&str>> = vec![Vec::new()];
    let mut width = if aligned { head.len() } else { usize::MAX };
    for param in &proto.params {
        let needed = param.len() + 2; // ", " or ");"
        if width.saturating_add(needed) > SYNOPSIS_WIDTH {
            lines.push(Vec::new());
            width = indent;
        }
        lines.last_mut().unwrap().push(param);
        width += needed;
    }
    let mut out = format!(
        "{}\\fB{}\\fR{}",
        roff::escape(&proto.before),
        roff::escape(name),
        roff::escape(&proto.open)
    );
    for (n, line) in lines.iter().enumerate() {
        if line.is_empty() {
            continue;
        }
        if n > 0 {
            out += &format!("\n{}", " ".repeat(indent));
        }
        let params: Vec<String> = line.iter().map(|p| param(p)).collect();
        out += &params.join(", ");
        out += if n + 1 < lines.len() { "," } else { ");" };
    }
    out.push('\n');
    out
}

fn longest(params: &[String]) -> usize {
    params.iter().map(String::len).max().unwrap_or(0)
}

/// "const char *typerep" with the name in italics.
fn param(p: &str) -> String {
    let split = p.rfind([' ', '*']).map_or(0, |i| i + 1);
    let (ty, name) = p.split_at(split);
    format!("{}\\fI{}\\fR", roff::escape(ty), roff::escape(name))
}

/// A CONSTANTS section for the constants the comment names: a name
/// (`MPIX_TYPE_REFERENCE_SIZE`) or a family (`MPIX_HASH_*`).
fn constants(item: &Item, all: &[Item]) -> String {
    let doc = item.doc.join(" ");
    let named: Vec<&Item> = all
        .iter()
        .filter(|c| matches!(c.kind, Kind::Constant { .. }))
        .filter(|c| mentions(&doc, &c.name) || family_mentioned(&doc, &c.name))
        .collect();
    if named.is_empty() {
        return String::new();
    }
    let mut out = String::from(".SH CONSTANTS\n");
    for c in named {
        let Kind::Constant { value } = &c.kind else {
            continue;
        };
        let value = match value.as_str() {
            "" => String::new(),
            v => format!(" = {}", roff::escape(v)),
        };
        out += &format!(".TP\n\\fB{}\\fR{value}\n", roff::escape(&c.name));
        let lines: Vec<&str> = c.doc.iter().map(String::as_str).collect();
        out += &roff::paragraph(&lines, &|_| Font::Bold);
    }
    out
}

/// Whether `text` names `name` as a whole word.
fn mentions(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let before = text[..at].chars().next_back().is_some_and(word);
        let after = text[at + name.len()..].chars().next().is_some_and(word);
        !before && !after
    })
}

/// Whether `text` names a family ("MPIX_HASH_*") that `name` belongs to.
fn family_mentioned(text: &str, name: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '*'))
        .filter_map(|w| w.strip_suffix('*'))
        .any(|prefix| prefix.starts_with("MPIX_") && name.starts_with(prefix))
}

/// The pages this one refers to: every other function or callback its
/// comment or prototype names, those whose comment or prototype names
/// it, and the overview.
fn see_also(item: &Item, all: &[Item]) -> Vec<(String, String)> {
    let text = |i: &Item| {
        let proto = i.prototype.as_ref().map(|p| p.params.join(" "));
        format!("{} {}", i.doc.join(" "), proto.unwrap_or_default())
    };
    let mine = text(item);
    let mut pages: Vec<(String, String)> = all
        .iter()
        .filter(|o| o.prototype.is_some() && o.name != item.name)
        .filter(|o| mentions(&mine, &o.name) || mentions(&text(o), &item.name))
        .map(|o| (o.name.clone(), "3".to_string()))
        .collect();
    pages.sort();
    pages.push(("mpix-marshal".into(), "7".into()));
    pages
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::parse;

    #[test]
    fn a_long_prototype_is_wrapped_within_the_width() {
        let proto = Prototype {
            before: "int ".into(),
            open: "(".into(),
            params: vec!["MPIX_Type_marshal_attr_size_function marshal_size_fn".into(); 3],
        };
        let text = synopsis("MPIX_Type_register_marshaled_keyval", &proto);
        let plain = text
            .replace("\\fB", "")
            .replace("\\fI", "")
            .replace("\\fR", "");
        for line in plain.lines() {
            assert!(line.len() <= SYNOPSIS_WIDTH, "{line:?} ({})", line.len());
        }
        assert_eq!(plain.lines().count(), 4, "{plain}");
        assert!(
            plain.starts_with("int MPIX_Type_register_marshaled_keyval(\n        MPIX_"),
            "{plain}"
        );
        assert!(plain.ends_with("marshal_size_fn);\n"), "{plain}");
    }

    #[test]
    fn a_short_prototype_aligns_with_its_parenthesis() {
        let proto = Prototype {
            before: "int ".into(),
            open: "(".into(),
            params: vec!["int keyval".into(), "MPI_Datatype *type".into()],
        };
        let text = synopsis("MPIX_f", &proto);
        assert_eq!(
            text,
            "int \\fBMPIX_f\\fR(int \\fIkeyval\\fR, MPI_Datatype *\\fItype\\fR);\n"
        );
    }

    #[test]
    fn a_page_has_its_sections_constants_and_references() {
        let header = "/*\n Hash family one.\n */\n#define MPIX_H_ONE 1\n\n\
            /*\n Hashes `type` with `kind`, an MPIX_H_* constant. See `MPIX_g`.\n\n \
            # Safety\n `hash` is writable.\n */\n\
            int MPIX_f(MPI_Datatype type, int kind, uint64_t *hash);\n\n\
            /*\n Another.\n */\nint MPIX_g(void *x);\n";
        let all = parse(header).unwrap();
        let (file, text) = page(&all[1], &all, "2026-01-02", "9.9").unwrap();
        assert_eq!(file, "MPIX_f.3");
        assert!(
            text.starts_with(".TH \"MPIX_f\" \"3\" \"2026-01-02\" \"mpix-marshal 9.9\""),
            "{text}"
        );
        assert!(
            text.contains(".SH NAME\nMPIX_f \\- Hashes type with kind, an MPIX_H_* constant\n"),
            "{text}"
        );
        assert!(
            text.contains("Hashes \\fItype\\fR with \\fIkind\\fR"),
            "{text}"
        );
        assert!(
            text.contains(".SH SAFETY\n\\fIhash\\fR is writable.\n"),
            "{text}"
        );
        assert!(
            text.contains(".SH CONSTANTS\n.TP\n\\fBMPIX_H_ONE\\fR = 1\nHash family one.\n"),
            "{text}"
        );
        assert!(text.contains(".SH RETURN VALUE\n"), "{text}");
        assert!(
            text.contains(".SH SEE ALSO\n.BR MPIX_g (3),\n.BR mpix\\-marshal (7)\n"),
            "{text}"
        );
    }
}
