//! The owned datatype tree: one node per constructor call, with the
//! arguments the call took. `marshal::tree` fills it from an MPI type, the
//! external reader from bytes; `unmarshal::build` turns it back into an MPI
//! type, the external writer into bytes. `validate` is the gate every tree passes
//! before any MPI constructor sees it.

use crate::error::{Error, Result};
use crate::format::codes::{Combiner, Distribution, Order, Predefined, DFLT_DARG, UNDEFINED};

/// Deepest tree the library marshals or unmarshals. MPI implementations
/// themselves handle trees of this depth; far deeper streams are hostile.
pub const MAX_DEPTH: usize = 512;

/// Most dimensions of a SUBARRAY or DARRAY. MPI sets no limit, but MPI
/// libraries build a darray in time quadratic in its dimensions (100,000
/// took seconds in MPICH and Open MPI): far more than any array has.
pub const MAX_NDIMS: usize = 1024;

/// Longest type name the format carries (MPICH's MPI_MAX_OBJECT_NAME - 1).
pub const MAX_NAME_LEN: usize = 127;

/// One constructor call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The name set with `MPI_Type_set_name`; None for unnamed and for
    /// predefined types, whose names are the MPI's own.
    pub name: Option<Vec<u8>>,
    /// Made by an MPI-4 large-count (`_c`) constructor.
    pub large: bool,
    pub kind: Kind,
    /// Marshalled attributes (registered keyvals), sorted by canonical
    /// name; empty for predefined types.
    pub attrs: Vec<Attribute>,
    /// The lower bound and extent the writer's MPI reported for this level
    /// (spec/external.md §5.6): kept on the constructors whose extent MPI
    /// derives with an implementation-defined alignment pad
    /// ([`records_bounds`]), None elsewhere and in trees built by hand. A
    /// rebuilt type has these bounds at every level that records them.
    pub bounds: Option<Bounds>,
    /// A RESIZED level that unmarshal added around the level below it to
    /// restore that level's recorded bounds, where the local MPI computed
    /// others (spec/external.md §10, S4): the typemap is the original's,
    /// the constructor tree has this extra level.
    pub correction: bool,
}

/// A level's lower bound and extent, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Bounds {
    pub lb: i64,
    pub extent: i64,
}

/// Whether a combiner's nodes record their bounds (`layout::Rule::bounds`):
/// MPICH pads a struct only when its members are not all one handle, Open
/// MPI pads hvectors and hindexed types too. Every other constructor's
/// extent follows from its arguments and its children's extents alone.
pub fn records_bounds(c: Combiner) -> bool {
    c.rule().bounds
}

/// One attribute: the keyval's canonical name and the opaque bytes its
/// marshal callback wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute {
    pub name: Vec<u8>,
    pub value: Vec<u8>,
}

/// The longest canonical name of an attribute, in bytes.
pub const MAX_ATTR_NAME_LEN: usize = 255;

/// The longest attribute value, in bytes.
pub const MAX_ATTR_VALUE: usize = (1 << 30) - 1;

/// The constructor and its arguments. Counts, displacements and strides are
/// 64-bit whatever the constructor's C types; byte displacements are in
/// bytes, element displacements in elements of the old type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Named(Predefined),
    Dup(Box<Node>),
    Contiguous {
        count: i64,
        old: Box<Node>,
    },
    Vector {
        count: i64,
        blocklength: i64,
        stride: i64,
        old: Box<Node>,
    },
    /// `legacy`: made by the MPI-1 `MPI_Type_hvector` (HVECTOR_INTEGER).
    Hvector {
        count: i64,
        blocklength: i64,
        stride: i64,
        old: Box<Node>,
        legacy: bool,
    },
    Indexed {
        blocklengths: Vec<i64>,
        displacements: Vec<i64>,
        old: Box<Node>,
    },
    Hindexed {
        blocklengths: Vec<i64>,
        displacements: Vec<i64>,
        old: Box<Node>,
        legacy: bool,
    },
    IndexedBlock {
        blocklength: i64,
        displacements: Vec<i64>,
        old: Box<Node>,
    },
    HindexedBlock {
        blocklength: i64,
        displacements: Vec<i64>,
        old: Box<Node>,
    },
    Struct {
        blocklengths: Vec<i64>,
        displacements: Vec<i64>,
        types: Vec<Node>,
        legacy: bool,
    },
    Subarray {
        sizes: Vec<i64>,
        subsizes: Vec<i64>,
        starts: Vec<i64>,
        order: Order,
        old: Box<Node>,
    },
    /// `dargs` holds `DFLT_DARG` (-1) for MPI_DISTRIBUTE_DFLT_DARG.
    Darray {
        size: i64,
        rank: i64,
        gsizes: Vec<i64>,
        distribs: Vec<Distribution>,
        dargs: Vec<i64>,
        psizes: Vec<i64>,
        order: Order,
        old: Box<Node>,
    },
    /// p and r are `UNDEFINED` (-1) for MPI_UNDEFINED.
    F90Real {
        p: i64,
        r: i64,
    },
    F90Complex {
        p: i64,
        r: i64,
    },
    F90Integer {
        r: i64,
    },
    Resized {
        lb: i64,
        extent: i64,
        old: Box<Node>,
    },
    /// `pair`: the value type, then the index type.
    ValueIndex {
        pair: Box<[Node; 2]>,
    },
}

impl Node {
    pub fn new(kind: Kind) -> Node {
        Node {
            name: None,
            large: false,
            kind,
            attrs: Vec::new(),
            bounds: None,
            correction: false,
        }
    }

    pub fn named(p: Predefined) -> Node {
        Node::new(Kind::Named(p))
    }

    pub fn combiner(&self) -> Combiner {
        self.kind.combiner()
    }

    /// Predefined in MPI's sense: never freed, carries no name of its own.
    pub fn is_predefined(&self) -> bool {
        self.combiner().is_predefined()
    }

    /// The child nodes, in stream order.
    pub fn children(&self) -> &[Node] {
        match &self.kind {
            Kind::Named(_)
            | Kind::F90Real { .. }
            | Kind::F90Complex { .. }
            | Kind::F90Integer { .. } => &[],
            Kind::Dup(old)
            | Kind::Contiguous { old, .. }
            | Kind::Vector { old, .. }
            | Kind::Hvector { old, .. }
            | Kind::Indexed { old, .. }
            | Kind::Hindexed { old, .. }
            | Kind::IndexedBlock { old, .. }
            | Kind::HindexedBlock { old, .. }
            | Kind::Subarray { old, .. }
            | Kind::Darray { old, .. }
            | Kind::Resized { old, .. } => std::slice::from_ref(old.as_ref()),
            Kind::Struct { types, .. } => types,
            Kind::ValueIndex { pair } => pair.as_slice(),
        }
    }

    /// The child nodes, mutably (to rewrite a tree in place).
    pub fn children_mut(&mut self) -> &mut [Node] {
        match &mut self.kind {
            Kind::Named(_)
            | Kind::F90Real { .. }
            | Kind::F90Complex { .. }
            | Kind::F90Integer { .. } => &mut [],
            Kind::Dup(old)
            | Kind::Contiguous { old, .. }
            | Kind::Vector { old, .. }
            | Kind::Hvector { old, .. }
            | Kind::Indexed { old, .. }
            | Kind::Hindexed { old, .. }
            | Kind::IndexedBlock { old, .. }
            | Kind::HindexedBlock { old, .. }
            | Kind::Subarray { old, .. }
            | Kind::Darray { old, .. }
            | Kind::Resized { old, .. } => std::slice::from_mut(old.as_mut()),
            Kind::Struct { types, .. } => types,
            Kind::ValueIndex { pair } => pair.as_mut_slice(),
        }
    }
}

impl Kind {
    pub fn combiner(&self) -> Combiner {
        match self {
            Kind::Named(_) => Combiner::Named,
            Kind::Dup(_) => Combiner::Dup,
            Kind::Contiguous { .. } => Combiner::Contiguous,
            Kind::Vector { .. } => Combiner::Vector,
            Kind::Hvector { legacy: false, .. } => Combiner::Hvector,
            Kind::Hvector { legacy: true, .. } => Combiner::HvectorInteger,
            Kind::Indexed { .. } => Combiner::Indexed,
            Kind::Hindexed { legacy: false, .. } => Combiner::Hindexed,
            Kind::Hindexed { legacy: true, .. } => Combiner::HindexedInteger,
            Kind::IndexedBlock { .. } => Combiner::IndexedBlock,
            Kind::HindexedBlock { .. } => Combiner::HindexedBlock,
            Kind::Struct { legacy: false, .. } => Combiner::Struct,
            Kind::Struct { legacy: true, .. } => Combiner::StructInteger,
            Kind::Subarray { .. } => Combiner::Subarray,
            Kind::Darray { .. } => Combiner::Darray,
            Kind::F90Real { .. } => Combiner::F90Real,
            Kind::F90Complex { .. } => Combiner::F90Complex,
            Kind::F90Integer { .. } => Combiner::F90Integer,
            Kind::Resized { .. } => Combiner::Resized,
            Kind::ValueIndex { .. } => Combiner::ValueIndex,
        }
    }
}

/// Checks that every constructor call in the tree has arguments the MPI
/// standard allows, so that no MPI constructor is called with arguments it
/// would reject (and abort on, under MPI_ERRORS_ARE_FATAL). Messages start
/// with the position in the tree: `root.2.0` is the first child of the
/// third child of the root.
pub fn validate(node: &Node) -> Result<()> {
    validate_at(node, 0).map_err(Failure::into_error)
}

fn validate_at(node: &Node, depth: usize) -> std::result::Result<(), Failure> {
    if depth >= MAX_DEPTH {
        return Err(Failure::new(Error::invalid(format!(
            "the tree is deeper than {MAX_DEPTH} levels"
        ))));
    }
    check_node(node).map_err(Failure::new)?;
    for (i, child) in node.children().iter().enumerate() {
        validate_at(child, depth + 1).map_err(|f| f.within(i))?;
    }
    Ok(())
}

/// An error found at some node of a tree. The path to the node is collected
/// while the recursion unwinds, so a successful walk allocates nothing.
pub(crate) struct Failure {
    /// Child indices, innermost first.
    path: Vec<usize>,
    error: Error,
}

impl Failure {
    pub(crate) fn new(error: Error) -> Failure {
        Failure {
            path: Vec::new(),
            error,
        }
    }

    /// The failure seen from the parent, whose child `i` it is in.
    pub(crate) fn within(mut self, i: usize) -> Failure {
        self.path.push(i);
        self
    }

    pub(crate) fn into_error(self) -> Error {
        let mut at = String::from("root");
        for i in self.path.iter().rev() {
            at.push_str(&format!(".{i}"));
        }
        match self.error {
            Error::InvalidArgument(m) => Error::InvalidArgument(format!("{at}: {m}")),
            Error::Unsupported(m) => Error::Unsupported(format!("{at}: {m}")),
            e => e,
        }
    }
}

/// The checks of one node, off the recursion path so that each level of a
/// deep tree costs one small stack frame.
#[inline(never)]
fn check_node(node: &Node) -> Result<()> {
    let fail = |what: String| {
        Err(Error::invalid(format!(
            "{}: {what}",
            node.combiner().mpi_name()
        )))
    };
    if let Some(name) = &node.name {
        if node.is_predefined() {
            return fail("a predefined type carries no name".into());
        }
        if name.is_empty() || name.len() > MAX_NAME_LEN || name.contains(&0) {
            return fail(format!(
                "a name must be 1 to {MAX_NAME_LEN} bytes without NUL, this one has {} bytes",
                name.len()
            ));
        }
    }
    if !node.attrs.is_empty() && node.is_predefined() {
        return fail("a predefined type carries no attributes".into());
    }
    for (i, a) in node.attrs.iter().enumerate() {
        if a.name.is_empty() || a.name.len() > MAX_ATTR_NAME_LEN || a.name.contains(&0) {
            return fail(format!(
                "attribute {i}: a canonical name must be 1 to {MAX_ATTR_NAME_LEN} bytes without NUL"
            ));
        }
        if i > 0 && node.attrs[i - 1].name >= a.name {
            return fail(format!(
                "attribute {i}: canonical names must be distinct and in increasing byte order"
            ));
        }
    }
    if node.large && !supports_large(node.combiner()) {
        return fail("this combiner has no large-count constructor".into());
    }
    if node.bounds.is_some() && !records_bounds(node.combiner()) {
        return fail("this combiner records no bounds".into());
    }
    if let Some(b) = node.bounds {
        if b.lb.checked_add(b.extent).is_none() {
            return fail(format!(
                "recorded lower bound {} and extent {} overflow 64 bits",
                b.lb, b.extent
            ));
        }
    }
    if node.correction && node.combiner() != Combiner::Resized {
        return fail("only a RESIZED level can be an extent correction".into());
    }
    // Classic constructors take C int counts; large ones MPI_Count.
    let int_max = if node.large {
        i64::MAX
    } else {
        i32::MAX as i64
    };
    let count = |what: &str, v: i64| -> Result<()> {
        if v < 0 || v > int_max {
            return Err(Error::invalid(format!(
                "{}: {what} {v} is out of range 0..={int_max}",
                node.combiner().mpi_name()
            )));
        }
        Ok(())
    };
    // Element displacements and strides are C ints in classic constructors.
    let int_arg = |what: &str, v: i64| -> Result<()> {
        if !node.large && i32::try_from(v).is_err() {
            return Err(Error::invalid(format!(
                "{}: {what} {v} does not fit a C int",
                node.combiner().mpi_name()
            )));
        }
        Ok(())
    };
    let same_len = |what: &str, a: usize, b: usize| -> Result<()> {
        if a != b {
            return Err(Error::invalid(format!(
                "{}: {what}: {a} and {b} entries",
                node.combiner().mpi_name()
            )));
        }
        Ok(())
    };
    match &node.kind {
        Kind::Named(_) => {}
        Kind::F90Real { p, r } | Kind::F90Complex { p, r } => {
            if (*p < 0 && *p != UNDEFINED)
                || (*r < 0 && *r != UNDEFINED)
                || *p > i32::MAX as i64
                || *r > i32::MAX as i64
            {
                return fail(format!(
                    "precision {p} and range {r} must be >= 0 or MPI_UNDEFINED"
                ));
            }
            if *p == UNDEFINED && *r == UNDEFINED {
                return fail("precision and range cannot both be MPI_UNDEFINED".into());
            }
        }
        Kind::F90Integer { r } => {
            if *r < 0 || *r > i32::MAX as i64 {
                return fail(format!("range {r} must be >= 0"));
            }
        }
        Kind::Dup(_) => {}
        Kind::Contiguous { count: c, .. } => count("count", *c)?,
        Kind::Vector {
            count: c,
            blocklength,
            stride,
            ..
        } => {
            count("count", *c)?;
            count("blocklength", *blocklength)?;
            int_arg("stride", *stride)?;
        }
        Kind::Hvector {
            count: c,
            blocklength,
            legacy,
            ..
        } => {
            count("count", *c)?;
            count("blocklength", *blocklength)?;
            if *legacy && node.large {
                return fail("MPI-1 constructors have no large-count form".into());
            }
        }
        Kind::Indexed {
            blocklengths,
            displacements,
            ..
        } => {
            same_len(
                "blocklengths and displacements differ in length",
                blocklengths.len(),
                displacements.len(),
            )?;
            count("count", blocklengths.len() as i64)?;
            for &b in blocklengths {
                count("blocklength", b)?;
            }
            for &d in displacements {
                int_arg("displacement", d)?;
            }
        }
        Kind::Hindexed {
            blocklengths,
            displacements,
            ..
        } => {
            same_len(
                "blocklengths and displacements differ in length",
                blocklengths.len(),
                displacements.len(),
            )?;
            count("count", blocklengths.len() as i64)?;
            for &b in blocklengths {
                count("blocklength", b)?;
            }
        }
        Kind::IndexedBlock {
            blocklength,
            displacements,
            ..
        } => {
            count("count", displacements.len() as i64)?;
            count("blocklength", *blocklength)?;
            for &d in displacements {
                int_arg("displacement", d)?;
            }
        }
        Kind::HindexedBlock {
            blocklength,
            displacements,
            ..
        } => {
            count("count", displacements.len() as i64)?;
            count("blocklength", *blocklength)?;
        }
        Kind::Struct {
            blocklengths,
            displacements,
            types,
            ..
        } => {
            same_len(
                "blocklengths and displacements differ in length",
                blocklengths.len(),
                displacements.len(),
            )?;
            same_len(
                "blocklengths and types differ in length",
                blocklengths.len(),
                types.len(),
            )?;
            count("count", blocklengths.len() as i64)?;
            for &b in blocklengths {
                count("blocklength", b)?;
            }
        }
        Kind::Subarray {
            sizes,
            subsizes,
            starts,
            ..
        } => {
            let n = sizes.len();
            same_len("sizes and subsizes differ in length", n, subsizes.len())?;
            same_len("sizes and starts differ in length", n, starts.len())?;
            if n == 0 || n > MAX_NDIMS {
                return fail(format!("ndims {n} is not in 1..={MAX_NDIMS}"));
            }
            for i in 0..n {
                let (s, ss, st) = (sizes[i], subsizes[i], starts[i]);
                count("size", s)?;
                count("subsize", ss)?;
                count("start", st)?;
                if s < 1 || ss < 1 || ss > s || st > s - ss {
                    return fail(format!(
                        "dimension {i}: need size >= 1, 1 <= subsize <= size and 0 <= start <= size - subsize, \
                         have size {s}, subsize {ss}, start {st}"
                    ));
                }
            }
        }
        Kind::Darray {
            size,
            rank,
            gsizes,
            distribs,
            dargs,
            psizes,
            ..
        } => {
            let n = gsizes.len();
            same_len("gsizes and distribs differ in length", n, distribs.len())?;
            same_len("gsizes and dargs differ in length", n, dargs.len())?;
            same_len("gsizes and psizes differ in length", n, psizes.len())?;
            if n == 0 || n > MAX_NDIMS {
                return fail(format!("ndims {n} is not in 1..={MAX_NDIMS}"));
            }
            if *size < 1 || *size > i32::MAX as i64 {
                return fail(format!("size {size} must be a positive C int"));
            }
            if *rank < 0 || *rank >= *size {
                return fail(format!("rank {rank} must be in 0..{size}"));
            }
            let mut product: i64 = 1;
            for i in 0..n {
                count("gsize", gsizes[i])?;
                if gsizes[i] < 1 {
                    return fail(format!("dimension {i}: gsize must be >= 1"));
                }
                let p = psizes[i];
                if p < 1 || p > i32::MAX as i64 {
                    return fail(format!("dimension {i}: psize {p} must be a positive C int"));
                }
                product = product.saturating_mul(p);
                let d = dargs[i];
                if d != DFLT_DARG && (d < 1 || d > i32::MAX as i64) {
                    return fail(format!(
                        "dimension {i}: darg {d} must be positive or MPI_DISTRIBUTE_DFLT_DARG"
                    ));
                }
                match distribs[i] {
                    Distribution::None => {
                        if p != 1 {
                            return fail(format!(
                                "dimension {i}: MPI_DISTRIBUTE_NONE needs psize 1, has {p}"
                            ));
                        }
                    }
                    Distribution::Block => {
                        if d != DFLT_DARG && d.saturating_mul(p) < gsizes[i] {
                            return fail(format!(
                                "dimension {i}: block size {d} times {p} processes does not cover gsize {}",
                                gsizes[i]
                            ));
                        }
                    }
                    Distribution::Cyclic => {}
                }
            }
            if product != *size {
                return fail(format!(
                    "the product of psizes is {product}, not size {size}"
                ));
            }
        }
        Kind::Resized { .. } => {}
        Kind::ValueIndex { .. } => {}
    }
    Ok(())
}

/// Combiners with an MPI-4 large-count constructor.
pub fn supports_large(c: Combiner) -> bool {
    c.rule().large
}
