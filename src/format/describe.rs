//! What a tree node says in words: its title, its arguments by the names
//! the MPI constructor gives them, the labels of its children, and the
//! whole tree as an outline. Shared by the inspector (`dump`, `draw`) and
//! the checker's reports (mpix-check's list of leaked types).

use super::codes::{Distribution, Order};
use super::tree::{Kind, Node};
use std::fmt::Write;

/// One argument value, or one element of an argument array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scalar {
    Int(i64),
    Word(&'static str),
}

/// An argument: a value or an array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    One(Scalar),
    Many(Vec<Scalar>),
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scalar::Int(v) => write!(f, "{v}"),
            Scalar::Word(w) => f.write_str(w),
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::One(s) => write!(f, "{s}"),
            Value::Many(v) => {
                f.write_str("[")?;
                for (i, s) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{s}")?;
                }
                f.write_str("]")
            }
        }
    }
}

fn int(v: i64) -> Value {
    Value::One(Scalar::Int(v))
}

fn ints(v: &[i64]) -> Value {
    Value::Many(v.iter().map(|x| Scalar::Int(*x)).collect())
}

fn order(o: Order) -> Value {
    Value::One(Scalar::Word(match o {
        Order::C => "MPI_ORDER_C",
        Order::Fortran => "MPI_ORDER_FORTRAN",
    }))
}

fn undefined_or(v: i64) -> Value {
    if v == -1 {
        Value::One(Scalar::Word("MPI_UNDEFINED"))
    } else {
        int(v)
    }
}

/// "MPI_INT" for a predefined type, else the combiner's MPI name.
pub fn title(node: &Node) -> &'static str {
    match &node.kind {
        Kind::Named(p) => p.mpi_name(),
        _ => node.combiner().mpi_name(),
    }
}

/// The node's name as text (names are bytes; shown lossily).
pub fn name(node: &Node) -> Option<String> {
    node.name
        .as_ref()
        .map(|n| String::from_utf8_lossy(n).into_owned())
}

/// The constructor's arguments other than its old type(s), in the order
/// of the constructor's parameters.
pub fn arguments(kind: &Kind) -> Vec<(&'static str, Value)> {
    match kind {
        Kind::Named(_) | Kind::Dup(_) | Kind::ValueIndex { .. } => vec![],
        Kind::Contiguous { count, .. } => vec![("count", int(*count))],
        Kind::Vector {
            count,
            blocklength,
            stride,
            ..
        } => vec![
            ("count", int(*count)),
            ("blocklength", int(*blocklength)),
            ("stride", int(*stride)),
        ],
        Kind::Hvector {
            count,
            blocklength,
            stride,
            ..
        } => vec![
            ("count", int(*count)),
            ("blocklength", int(*blocklength)),
            ("stride (bytes)", int(*stride)),
        ],
        Kind::Indexed {
            blocklengths,
            displacements,
            ..
        } => vec![
            ("count", int(blocklengths.len() as i64)),
            ("blocklengths", ints(blocklengths)),
            ("displacements", ints(displacements)),
        ],
        Kind::Hindexed {
            blocklengths,
            displacements,
            ..
        } => vec![
            ("count", int(blocklengths.len() as i64)),
            ("blocklengths", ints(blocklengths)),
            ("displacements (bytes)", ints(displacements)),
        ],
        Kind::IndexedBlock {
            blocklength,
            displacements,
            ..
        } => vec![
            ("count", int(displacements.len() as i64)),
            ("blocklength", int(*blocklength)),
            ("displacements", ints(displacements)),
        ],
        Kind::HindexedBlock {
            blocklength,
            displacements,
            ..
        } => vec![
            ("count", int(displacements.len() as i64)),
            ("blocklength", int(*blocklength)),
            ("displacements (bytes)", ints(displacements)),
        ],
        Kind::Struct {
            blocklengths,
            displacements,
            ..
        } => vec![
            ("count", int(blocklengths.len() as i64)),
            ("blocklengths", ints(blocklengths)),
            ("displacements (bytes)", ints(displacements)),
        ],
        Kind::Subarray {
            sizes,
            subsizes,
            starts,
            order: o,
            ..
        } => vec![
            ("ndims", int(sizes.len() as i64)),
            ("sizes", ints(sizes)),
            ("subsizes", ints(subsizes)),
            ("starts", ints(starts)),
            ("order", order(*o)),
        ],
        Kind::Darray {
            size,
            rank,
            gsizes,
            distribs,
            dargs,
            psizes,
            order: o,
            ..
        } => vec![
            ("size", int(*size)),
            ("rank", int(*rank)),
            ("ndims", int(gsizes.len() as i64)),
            ("gsizes", ints(gsizes)),
            (
                "distribs",
                Value::Many(
                    distribs
                        .iter()
                        .map(|d| {
                            Scalar::Word(match d {
                                Distribution::Block => "MPI_DISTRIBUTE_BLOCK",
                                Distribution::Cyclic => "MPI_DISTRIBUTE_CYCLIC",
                                Distribution::None => "MPI_DISTRIBUTE_NONE",
                            })
                        })
                        .collect(),
                ),
            ),
            (
                "dargs",
                Value::Many(
                    dargs
                        .iter()
                        .map(|d| match d {
                            -1 => Scalar::Word("MPI_DISTRIBUTE_DFLT_DARG"),
                            v => Scalar::Int(*v),
                        })
                        .collect(),
                ),
            ),
            ("psizes", ints(psizes)),
            ("order", order(*o)),
        ],
        Kind::F90Real { p, r } | Kind::F90Complex { p, r } => {
            vec![("p", undefined_or(*p)), ("r", undefined_or(*r))]
        }
        Kind::F90Integer { r } => vec![("r", undefined_or(*r))],
        Kind::Resized { lb, extent, .. } => vec![("lb", int(*lb)), ("extent", int(*extent))],
    }
}

/// The label of each child, in stream order: "old", "types[2]", "pair[0]".
pub fn child_labels(node: &Node) -> Vec<String> {
    let n = node.children().len();
    match &node.kind {
        Kind::Struct { .. } => (0..n).map(|i| format!("types[{i}]")).collect(),
        Kind::ValueIndex { .. } => vec!["value type".into(), "index type".into()],
        _ => (0..n).map(|_| "old".to_string()).collect(),
    }
}

/// The tree as indented lines, one per node with its arguments, as
/// `mpix-marshal dump` prints it without what the local MPI reports:
/// "root: MPI_COMBINER_VECTOR" / "  count 2, blocklength 1, stride 3" /
/// "  old: MPI_INT". Each line starts with `indent`.
pub fn outline(node: &Node, indent: &str) -> String {
    let mut out = String::new();
    outline_node(node, "root", indent, &mut out);
    out
}

fn outline_node(node: &Node, label: &str, pad: &str, out: &mut String) {
    let _ = write!(out, "{pad}{label}: {}", title(node));
    if let Some(n) = name(node) {
        let _ = write!(out, " {n:?}");
    }
    out.push('\n');
    let args: Vec<String> = arguments(&node.kind)
        .into_iter()
        .map(|(arg, value)| format!("{arg} {value}"))
        .collect();
    if !args.is_empty() {
        let _ = writeln!(out, "{pad}  {}", args.join(", "));
    }
    let inner = format!("{pad}  ");
    for (child, label) in node.children().iter().zip(child_labels(node)) {
        outline_node(child, &label, &inner, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::codes::Predefined;

    #[test]
    fn outline_has_a_line_per_node_and_its_arguments() {
        let vector = Node::new(Kind::Vector {
            count: 2,
            blocklength: 1,
            stride: 3,
            old: Box::new(Node::named(Predefined(0x209))), // MPI_INT
        });
        let mut named = Node::new(Kind::Dup(Box::new(vector)));
        named.name = Some(b"halo".to_vec());
        assert_eq!(
            outline(&named, "> "),
            "> root: MPI_COMBINER_DUP \"halo\"\n\
             >   old: MPI_COMBINER_VECTOR\n\
             >     count 2, blocklength 1, stride 3\n\
             >     old: MPI_INT\n"
        );
    }
}
