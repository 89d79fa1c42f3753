//! The reader of `check/calls.txt` (the table of interposed MPI calls)
//! and the expansion of its rows into forms: names, parameters, Rust and
//! C types. Shared by the build script (which writes the wrappers) and by
//! the docs test (which checks the docs' tables against the table).

#![allow(dead_code)] // each user takes the part it needs

use std::collections::BTreeMap;

/// One parameter: its C type as written (with `Count`/`Displ`), its name.
#[derive(Clone, Debug)]
pub struct Param {
    pub ctype: String,
    pub name: String,
}

/// One row of the table.
#[derive(Clone, Debug)]
pub struct Row {
    pub line: usize,
    pub name: String,
    pub shape: String,
    pub forms: Vec<char>,
    pub params: Vec<Param>,
    pub keys: BTreeMap<String, String>,
}

/// The whole table: the shapes' templates, the rows in order.
pub struct Table {
    pub shapes: BTreeMap<String, BTreeMap<char, String>>,
    pub rows: Vec<Row>,
}

/// One form of a row: what a wrapper or a declaration is made of.
#[derive(Clone, Debug)]
pub struct Form {
    /// b, i or p.
    pub kind: char,
    /// The `_c` form.
    pub large: bool,
    /// Needs the MPI-4 large-count calls (a c form, an `I` or a `B`).
    pub needs_mpi4: bool,
    /// A collective's persistent form (needs the persistent collectives).
    pub needs_persistent: bool,
    /// `Bcast`, `Ibcast`, `Bcast_init_c`: the name without `MPI_`.
    pub name: String,
    pub params: Vec<Param>,
}

/// Reads the table; an error names the line.
pub fn parse(text: &str) -> Result<Table, String> {
    let mut shapes: BTreeMap<String, BTreeMap<char, String>> = BTreeMap::new();
    let mut rows: Vec<Row> = Vec::new();
    let mut shape: Option<String> = None;
    let mut lines = text.lines().enumerate().peekable();
    while let Some((i, raw)) = lines.next() {
        let line = raw.trim_end();
        let n = i + 1;
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if let Some(rest) = line.strip_prefix("[shape ") {
            let name = rest.trim_end_matches(']').trim().to_string();
            shapes.insert(name.clone(), BTreeMap::new());
            shape = Some(name);
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            let (key, value) = line
                .trim()
                .split_once(':')
                .ok_or(format!("calls.txt:{n}: expected `key: value`"))?;
            let row = rows
                .last_mut()
                .ok_or(format!("calls.txt:{n}: a key before any row"))?;
            row.keys.insert(key.trim().into(), value.trim().into());
            continue;
        }
        if let Some(s) = &shape {
            if line.split_whitespace().next().is_some_and(|w| w.len() == 1) {
                let (form, body) = line
                    .split_once(char::is_whitespace)
                    .ok_or(format!("calls.txt:{n}: expected `FORM BODY`"))?;
                let form = single(form, n)?;
                shapes.get_mut(s).unwrap().insert(form, body.trim().into());
                continue;
            }
        }
        shape = None;
        let mut text = line.to_string();
        while !text.contains(')') {
            let (_, more) = lines
                .next()
                .ok_or(format!("calls.txt:{n}: unclosed parameter list"))?;
            text.push(' ');
            text.push_str(more.trim());
        }
        rows.push(row(&text, n)?);
    }
    let table = Table { shapes, rows };
    table.validate()?;
    Ok(table)
}

fn single(s: &str, n: usize) -> Result<char, String> {
    let mut c = s.chars();
    match (c.next(), c.next()) {
        (Some(f), None) => Ok(f),
        _ => Err(format!("calls.txt:{n}: `{s}` is not one form letter")),
    }
}

fn row(text: &str, n: usize) -> Result<Row, String> {
    let (head, rest) = text.split_once('(').unwrap();
    let inside = rest
        .rsplit_once(')')
        .ok_or(format!("calls.txt:{n}: no `)`"))?
        .0;
    let words: Vec<&str> = head.split_whitespace().collect();
    if words.len() < 3 {
        return Err(format!(
            "calls.txt:{n}: expected NAME SHAPE FORMS (PARAMETERS)"
        ));
    }
    let mut forms = Vec::new();
    for f in &words[2..] {
        let f = single(f, n)?;
        if !"bipcIB".contains(f) {
            return Err(format!("calls.txt:{n}: unknown form `{f}`"));
        }
        forms.push(f);
    }
    let params = inside
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| param(p, n))
        .collect::<Result<_, _>>()?;
    Ok(Row {
        line: n,
        name: words[0].into(),
        shape: words[1].into(),
        forms,
        params,
        keys: BTreeMap::new(),
    })
}

fn param(p: &str, n: usize) -> Result<Param, String> {
    let split = p
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '[' || c == ']'))
        .ok_or(format!("calls.txt:{n}: parameter `{p}` has no type"))?;
    let (ty, name) = p.split_at(split + 1);
    let (name, array) = match name.strip_suffix("[]") {
        Some(stem) => (stem, "*"),
        None => (name, ""),
    };
    Ok(Param {
        ctype: format!("{}{array}", ty.trim()),
        name: name.into(),
    })
}

impl Table {
    fn validate(&self) -> Result<(), String> {
        for r in &self.rows {
            if r.shape == "edge" {
                continue;
            }
            let t = self
                .shapes
                .get(&r.shape)
                .ok_or(format!("calls.txt:{}: no [shape {}]", r.line, r.shape))?;
            for f in &r.forms {
                let k = if f.is_ascii_uppercase() {
                    f.to_ascii_lowercase()
                } else {
                    *f
                };
                if k != 'c' && !t.contains_key(&k) {
                    return Err(format!(
                        "calls.txt:{}: [shape {}] has no form {k}",
                        r.line, r.shape
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Row {
    /// Every form of the row, in order: b, i, p, then their `_c` forms.
    pub fn expand(&self) -> Vec<Form> {
        let large_too = self.forms.contains(&'c');
        let mut out = Vec::new();
        for large in [false, true] {
            if large && !large_too {
                break;
            }
            for &f in &self.forms {
                if f == 'c' {
                    continue;
                }
                out.push(self.form(f, large));
            }
        }
        out
    }

    /// The i form of the same width (for `$icall`).
    pub fn i_form(&self, large: bool) -> Form {
        self.form('i', large)
    }

    fn form(&self, f: char, large: bool) -> Form {
        let kind = f.to_ascii_lowercase();
        let mut params = self.params.clone();
        let ends_with_status = params
            .last()
            .is_some_and(|p| p.ctype == "MPI_Status *" && p.name == "status");
        if kind != 'b' {
            if ends_with_status {
                params.pop();
            }
            if kind == 'p' && self.shape == "coll" {
                params.push(Param {
                    ctype: "MPI_Info".into(),
                    name: "info".into(),
                });
            }
            params.push(Param {
                ctype: "MPI_Request *".into(),
                name: "request".into(),
            });
        }
        if large {
            for p in &mut params {
                p.ctype = words(&p.ctype, "MPI_Count", "MPI_Aint", "MPI_Count");
            }
        }
        let mut name = match kind {
            'i' => format!("I{}{}", self.name[..1].to_lowercase(), &self.name[1..]),
            'p' => format!("{}_init", self.name),
            _ => self.name.clone(),
        };
        if large {
            name.push_str("_c");
        }
        Form {
            kind,
            large,
            needs_mpi4: large || f.is_ascii_uppercase(),
            needs_persistent: kind == 'p' && self.shape == "coll",
            name,
            params,
        }
    }
}

impl Param {
    /// The C type with the small-count placeholders resolved.
    pub fn c_type(&self) -> String {
        words(&self.ctype, "int", "int", "MPI_Aint")
    }

    /// The Rust type, in the names of our bindings (`crate::sys`).
    pub fn rust_type(&self) -> String {
        let c = self.c_type();
        if c == "MPI_User_function *" {
            // bindgen's shape: a nullable function pointer, by value.
            return "MPI_User_function".into();
        }
        let depth = c.matches('*').count();
        let constant = c.starts_with("const ");
        let base = c.trim_start_matches("const ").trim_end_matches(['*', ' ']);
        let base = match base {
            "void" => "c_void",
            "int" => "c_int",
            "char" => "c_char",
            other => other,
        };
        let mut t = base.to_string();
        for level in 0..depth {
            let outermost = level == depth - 1;
            let q = if constant && depth == 1 && outermost {
                "*const "
            } else {
                "*mut "
            };
            t = format!("{q}{t}");
        }
        t
    }

    pub fn is_pointer(&self) -> bool {
        self.c_type().contains('*') && self.c_type() != "MPI_User_function *"
    }
}

/// `ctype` with the placeholder words `Count`, `Displ` and `Aint`
/// replaced.
fn words(ctype: &str, count: &str, displ: &str, aint: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    for ch in ctype.chars().chain(std::iter::once(' ')) {
        if ch.is_alphanumeric() || ch == '_' {
            word.push(ch);
            continue;
        }
        out.push_str(match word.as_str() {
            "Count" => count,
            "Displ" => displ,
            "Aint" => aint,
            w => w,
        });
        word.clear();
        out.push(ch);
    }
    out.pop();
    out
}
