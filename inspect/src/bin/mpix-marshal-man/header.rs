//! Reading the C header (include/mpix_marshal.h, cbindgen's output from
//! the Rust doc comments of src/capi/): its documented declarations.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum HeaderError {
    #[error("line {line}: a doc comment that no declaration follows")]
    Dangling { line: usize },
    #[error("line {line}: cannot read the declaration {text:?}")]
    Declaration { line: usize, text: String },
    #[error("line {line}: an unterminated doc comment")]
    Unterminated { line: usize },
}

/// What a documented declaration declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// `#define NAME VALUE`, or a variant of a `typedef enum`.
    Constant { value: String },
    /// `RET NAME(PARAMS);`
    Function,
    /// `typedef RET (*NAME)(PARAMS);`
    Callback,
    /// `typedef enum NAME { ... } NAME;`
    Enum,
}

/// A function's or callback's prototype, split where the pages need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prototype {
    /// Everything before the name: "int " or "typedef int (*".
    pub before: String,
    /// What follows the name up to the parameters: "(" or ")(".
    pub open: String,
    /// Each parameter as written ("const char *typerep").
    pub params: Vec<String>,
}

impl Prototype {
    /// The parameter names ("typerep"), without type or pointer stars.
    pub fn param_names(&self) -> Vec<&str> {
        self.params
            .iter()
            .filter_map(|p| p.rsplit([' ', '*']).next())
            .collect()
    }
}

/// One documented declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub name: String,
    pub kind: Kind,
    /// The doc comment's lines, with the comment's indentation removed.
    pub doc: Vec<String>,
    /// For a function or callback.
    pub prototype: Option<Prototype>,
}

/// Every documented declaration of `header`, in order.
pub fn parse(header: &str) -> Result<Vec<Item>, HeaderError> {
    let lines: Vec<&str> = header.lines().collect();
    let mut items = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "/*" {
            i += 1;
            continue;
        }
        let start = i;
        let end = (i..lines.len())
            .find(|&j| lines[j].trim() == "*/")
            .ok_or(HeaderError::Unterminated { line: start + 1 })?;
        let doc = dedent(&lines[start + 1..end]);
        let decl = (end + 1..lines.len())
            .find(|&j| !lines[j].trim().is_empty())
            .ok_or(HeaderError::Dangling { line: start + 1 })?;
        items.push(declaration(lines[decl].trim(), decl + 1, doc)?);
        i = decl + 1;
    }
    Ok(items)
}

/// The comment's lines, less the indentation all non-empty ones share.
fn dedent(lines: &[&str]) -> Vec<String> {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or("").trim_end().to_string())
        .collect()
}

fn declaration(text: &str, line: usize, doc: Vec<String>) -> Result<Item, HeaderError> {
    let bad = || HeaderError::Declaration {
        line,
        text: text.to_string(),
    };
    let item = |name: &str, kind, prototype| Item {
        name: name.to_string(),
        kind,
        doc: doc.clone(),
        prototype,
    };
    if let Some(rest) = text.strip_prefix("#define ") {
        // A macro may have no value (a feature flag).
        let (name, value) = rest.split_once(' ').unwrap_or((rest, ""));
        return Ok(item(
            name,
            Kind::Constant {
                value: value.trim().into(),
            },
            None,
        ));
    }
    if let Some(rest) = text.strip_prefix("typedef enum ") {
        let name = rest.trim_end_matches('{').trim();
        return Ok(item(name, Kind::Enum, None));
    }
    if text.ends_with(',') && !text.contains('(') {
        // An enum variant: NAME = VALUE,
        let (name, value) = text.trim_end_matches(',').split_once('=').ok_or_else(bad)?;
        let value = value.trim().to_string();
        return Ok(item(name.trim(), Kind::Constant { value }, None));
    }
    let body = text.strip_suffix(");").ok_or_else(bad)?;
    if let Some(rest) = body.strip_prefix("typedef ") {
        // typedef RET (*NAME)(PARAMS
        let (ret, rest) = rest.split_once("(*").ok_or_else(bad)?;
        let (name, params) = rest.split_once(")(").ok_or_else(bad)?;
        let proto = prototype(&format!("typedef {ret}(*"), ")(", params);
        return Ok(item(name, Kind::Callback, Some(proto)));
    }
    // RET NAME(PARAMS
    let (head, params) = body.split_once('(').ok_or_else(bad)?;
    let (ret, name) = head.rsplit_once([' ', '*']).ok_or_else(bad)?;
    let before = &head[..ret.len() + 1];
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(bad());
    }
    Ok(item(
        name,
        Kind::Function,
        Some(prototype(before, "(", params)),
    ))
}

fn prototype(before: &str, open: &str, params: &str) -> Prototype {
    Prototype {
        before: before.to_string(),
        open: open.to_string(),
        params: params.split(", ").map(str::to_string).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "/*
 Two lines
 of doc.
 */
#define MPIX_A 1

/*
 The kinds.
 */
typedef enum MPIX_K {
  /*
   Kind one.
   */
  MPIX_K_ONE = 1,
} MPIX_K;

/*
 A callback.
 */
typedef int (*MPIX_cb)(int keyval, const char *name);

/*
 A function.

 # Safety
 Pointers.
 */
int MPIX_f(const char *typerep, MPI_Datatype *type);
";

    #[test]
    fn every_kind_of_declaration_is_read() {
        let items = parse(HEADER).unwrap();
        let names: Vec<_> = items.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(
            names,
            ["MPIX_A", "MPIX_K", "MPIX_K_ONE", "MPIX_cb", "MPIX_f"]
        );
        assert_eq!(items[0].doc, ["Two lines", "of doc."]);
        assert_eq!(items[0].kind, Kind::Constant { value: "1".into() });
        assert_eq!(items[2].kind, Kind::Constant { value: "1".into() });
        assert_eq!(items[2].doc, ["Kind one."]);
        let cb = items[3].prototype.as_ref().unwrap();
        assert_eq!(items[3].kind, Kind::Callback);
        assert_eq!(cb.before, "typedef int (*");
        assert_eq!(cb.param_names(), ["keyval", "name"]);
        let f = items[4].prototype.as_ref().unwrap();
        assert_eq!(items[4].kind, Kind::Function);
        assert_eq!(f.before, "int ");
        assert_eq!(f.params, ["const char *typerep", "MPI_Datatype *type"]);
        assert_eq!(items[4].doc, ["A function.", "", "# Safety", "Pointers."]);
    }

    #[test]
    fn a_declaration_it_cannot_read_is_an_error_with_its_line() {
        let flag = parse("/*\n A flag.\n */\n#define MPIX_HAS_X\n").unwrap();
        assert_eq!(flag[0].kind, Kind::Constant { value: "".into() });
        let err = parse("/*\n x\n */\nstruct S;\n").unwrap_err();
        assert!(
            matches!(err, HeaderError::Declaration { line: 4, .. }),
            "{err}"
        );
        assert!(matches!(
            parse("/*\n x\n"),
            Err(HeaderError::Unterminated { line: 1 })
        ));
        assert!(matches!(
            parse("/*\n x\n */\n"),
            Err(HeaderError::Dangling { line: 1 })
        ));
    }
}
