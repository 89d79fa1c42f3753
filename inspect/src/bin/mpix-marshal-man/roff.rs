//! Writing roff (man(7) macros): escaping plain text, and turning the
//! header's doc comments (paragraphs, `code` spans) into roff.

/// `text` escaped for roff, within a line: backslashes, minus signs, and
/// every non-ASCII character as a `\[uXXXX]` escape (so that the
/// pages are ASCII whatever the formatter's input encoding).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\e"),
            '-' => out.push_str("\\-"),
            c if c.is_ascii() => out.push(c),
            c => out.push_str(&format!("\\[u{:04X}]", c as u32)),
        }
    }
    out
}

/// A font for a `code` span of a doc comment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Font {
    Bold,
    Italic,
}

/// One doc-comment paragraph as roff text: `code` spans in the font
/// `font_of` picks for each (italic for an argument, bold otherwise), and
/// lines kept as they are (the formatter fills them).
pub fn paragraph(lines: &[&str], font_of: &dyn Fn(&str) -> Font) -> String {
    let mut out = String::new();
    for line in lines {
        let mut text = String::new();
        for (i, piece) in line.trim().split('`').enumerate() {
            if i % 2 == 0 {
                text += &escape(piece);
            } else {
                let f = match font_of(piece) {
                    Font::Bold => "B",
                    Font::Italic => "I",
                };
                text += &format!("\\f{f}{}\\fR", escape(piece));
            }
        }
        // A line must not start with a control character.
        if text.starts_with('.') || text.starts_with('\'') {
            text.insert_str(0, "\\&");
        }
        out += &text;
        out.push('\n');
    }
    out
}

/// The `.TH` line: `title`, `section`, date, and the source and manual names.
pub fn title(title: &str, section: &str, date: &str, version: &str, manual: &str) -> String {
    format!(".TH \"{title}\" \"{section}\" \"{date}\" \"mpix-marshal {version}\" \"{manual}\"\n")
}

/// The pages' date, YYYY-MM-DD: that of `SOURCE_DATE_EPOCH` (seconds
/// since 1970, for reproducible builds) when set, else today's (UTC).
pub fn date() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        });
    let (y, m, d) = civil_from_days(secs / 86_400);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The Gregorian date of day `days` since 1970-01-01 (days are counted
/// in 400-year eras of 146097 days, each starting on a March 1st, so that
/// the leap day ends a year).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468; // days since 0000-03-01
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = era * 400 + yoe + u64::from(m <= 2);
    (y, m, d)
}

/// A SEE ALSO section: `(name, section)` pairs, comma-separated.
pub fn see_also(pages: &[(String, String)]) -> String {
    let mut out = String::from(".SH SEE ALSO\n");
    for (i, (name, section)) in pages.iter().enumerate() {
        let comma = if i + 1 < pages.len() { "," } else { "" };
        out += &format!(".BR {} ({}){comma}\n", escape(name), section);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_gregorian() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(59), (1970, 3, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_597), (2026, 5, 24));
    }

    #[test]
    fn escape_makes_control_characters_and_non_ascii_safe() {
        assert_eq!(escape("a\\b"), "a\\eb");
        assert_eq!(escape("2^61 - 1"), "2^61 \\- 1");
        assert_eq!(escape("(α, n) ×"), "(\\[u03B1], n) \\[u00D7]");
    }

    #[test]
    fn paragraph_sets_code_spans_in_their_fonts() {
        let font = |s: &str| {
            if s == "type" {
                Font::Italic
            } else {
                Font::Bold
            }
        };
        let got = paragraph(&["Frees `type` with `MPI_Type_free`."], &font);
        assert_eq!(got, "Frees \\fItype\\fR with \\fBMPI_Type_free\\fR.\n");
        let got = paragraph(&["`.x` first", ".y", "'z"], &font);
        assert_eq!(got, "\\fB.x\\fR first\n\\&.y\n\\&'z\n");
    }
}
