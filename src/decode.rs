//! The decoder: an MPI datatype into an owned tree, through
//! `MPI_Type_get_envelope` / `MPI_Type_get_contents` (their `_c` forms on
//! MPI-4). Every derived handle get_contents returns is freed here, on every
//! path; predefined and F90 handles never are.

use crate::codes::{Combiner, Distribution, Order, DFLT_DARG, UNDEFINED};
use crate::error::{Error, Result};
use crate::mpi::{self, Contents, Datatype, Local, MPI_Aint, MPI_Count};
use crate::tree::{Kind, Node, MAX_DEPTH, MAX_NAME_LEN};
use std::os::raw::c_int;

/// Decodes `datatype` into a tree. The handle itself is not freed.
pub fn decode(datatype: Datatype) -> Result<Node> {
    let mut d = Decoder {
        local: mpi::local(),
        pool: Vec::new(),
    };
    d.node(datatype, 0)
}

struct Decoder {
    local: &'static Local,
    /// get_contents buffers, one per depth, reused across siblings.
    pool: Vec<Contents>,
}

/// Frees the derived handles get_contents returned, whatever happens.
struct Returned {
    types: Vec<Datatype>,
    /// Some(true): decoded, derived; Some(false): decoded, predefined;
    /// None: not decoded yet, so unknown.
    derived: Vec<Option<bool>>,
}

impl Drop for Returned {
    fn drop(&mut self) {
        for (&t, &d) in self.types.iter().zip(&self.derived) {
            let derived = d.unwrap_or_else(|| is_derived(t));
            if derived {
                // Nothing useful can be done with a failure while cleaning up.
                let _ = mpi::free(t);
            }
        }
    }
}

fn is_derived(t: Datatype) -> bool {
    let local = mpi::local();
    match mpi::envelope(t) {
        Ok(env) => !matches!(
            local.combiner(env.combiner),
            Some(Combiner::Named | Combiner::F90Real | Combiner::F90Complex | Combiner::F90Integer)
        ),
        Err(_) => false,
    }
}

impl Decoder {
    fn node(&mut self, t: Datatype, depth: usize) -> Result<Node> {
        let env = mpi::envelope(t)?;
        let combiner = self
            .local
            .combiner(env.combiner)
            .ok_or_else(|| Error::unsupported(format!("unknown combiner value {} from MPI_Type_get_envelope", env.combiner)))?;
        if depth >= MAX_DEPTH {
            return Err(Error::unsupported(format!(
                "the datatype is nested deeper than {MAX_DEPTH} levels, the format's limit"
            )));
        }
        if combiner == Combiner::Named {
            return self.named(t);
        }
        if self.pool.len() <= depth {
            self.pool.resize_with(depth + 1, Contents::default);
        }
        let mut contents = std::mem::take(&mut self.pool[depth]);
        let result = mpi::contents(t, &env, &mut contents).and_then(|()| self.derived(t, combiner, &contents, depth));
        self.pool[depth] = contents;
        result
    }

    fn named(&self, t: Datatype) -> Result<Node> {
        match self.local.predefined(t) {
            Some(p) => Ok(Node::named(p)),
            None => {
                let name = mpi::get_name(t)?.unwrap_or_default();
                Err(Error::unsupported(format!(
                    "the predefined datatype {} has no portable code",
                    String::from_utf8_lossy(&name)
                )))
            }
        }
    }

    fn derived(&mut self, t: Datatype, combiner: Combiner, c: &Contents, depth: usize) -> Result<Node> {
        let mut returned = Returned {
            types: c.types.clone(),
            derived: vec![None; c.types.len()],
        };
        let large = !c.counts.is_empty();
        let mut a = Args::new(&c.ints, &c.addrs, &c.counts, large);
        let l = &self.local.constants;
        let kind = match combiner {
            Combiner::Named => unreachable!("handled by the caller"),
            Combiner::F90Real | Combiner::F90Complex => {
                let p = undefined(a.int()?, l.undefined);
                let r = undefined(a.int()?, l.undefined);
                if combiner == Combiner::F90Real {
                    Kind::F90Real { p, r }
                } else {
                    Kind::F90Complex { p, r }
                }
            }
            Combiner::F90Integer => Kind::F90Integer {
                r: undefined(a.int()?, l.undefined),
            },
            Combiner::Dup => Kind::Dup(self.child(&mut returned, 0, depth)?),
            Combiner::Contiguous => Kind::Contiguous {
                count: a.cnt()?,
                old: self.child(&mut returned, 0, depth)?,
            },
            Combiner::Vector => Kind::Vector {
                count: a.cnt()?,
                blocklength: a.cnt()?,
                stride: a.cnt()?,
                old: self.child(&mut returned, 0, depth)?,
            },
            Combiner::Hvector | Combiner::HvectorInteger => Kind::Hvector {
                count: a.cnt()?,
                blocklength: a.cnt()?,
                stride: a.addr()?,
                old: self.child(&mut returned, 0, depth)?,
                legacy: combiner == Combiner::HvectorInteger,
            },
            Combiner::Indexed => {
                let n = a.len()?;
                Kind::Indexed {
                    blocklengths: a.cnts(n)?,
                    displacements: a.cnts(n)?,
                    old: self.child(&mut returned, 0, depth)?,
                }
            }
            Combiner::Hindexed | Combiner::HindexedInteger => {
                let n = a.len()?;
                Kind::Hindexed {
                    blocklengths: a.cnts(n)?,
                    displacements: a.addrs(n)?,
                    old: self.child(&mut returned, 0, depth)?,
                    legacy: combiner == Combiner::HindexedInteger,
                }
            }
            Combiner::IndexedBlock => {
                let n = a.len()?;
                Kind::IndexedBlock {
                    blocklength: a.cnt()?,
                    displacements: a.cnts(n)?,
                    old: self.child(&mut returned, 0, depth)?,
                }
            }
            Combiner::HindexedBlock => {
                let n = a.len()?;
                Kind::HindexedBlock {
                    blocklength: a.cnt()?,
                    displacements: a.addrs(n)?,
                    old: self.child(&mut returned, 0, depth)?,
                }
            }
            Combiner::Struct | Combiner::StructInteger => {
                let n = a.len()?;
                let blocklengths = a.cnts(n)?;
                let displacements = a.addrs(n)?;
                if returned.types.len() != n {
                    return Err(layout(combiner));
                }
                let mut types = Vec::with_capacity(n);
                for i in 0..n {
                    types.push(*self.child(&mut returned, i, depth)?);
                }
                Kind::Struct {
                    blocklengths,
                    displacements,
                    types,
                    legacy: combiner == Combiner::StructInteger,
                }
            }
            Combiner::Subarray => {
                let n = a.int_len()?;
                let sizes = a.cnts(n)?;
                let subsizes = a.cnts(n)?;
                let starts = a.cnts(n)?;
                let order = self.order(a.int()?)?;
                Kind::Subarray {
                    sizes,
                    subsizes,
                    starts,
                    order,
                    old: self.child(&mut returned, 0, depth)?,
                }
            }
            Combiner::Darray => {
                let size = a.int()?;
                let rank = a.int()?;
                let n = a.int_len()?;
                let gsizes = a.cnts(n)?;
                let distribs = (0..n)
                    .map(|_| a.int().and_then(|d| self.distribution(d)))
                    .collect::<Result<Vec<_>>>()?;
                let dargs = (0..n)
                    .map(|_| a.int().map(|d| if d == l.distribute_dflt_darg as i64 { DFLT_DARG } else { d }))
                    .collect::<Result<Vec<_>>>()?;
                let psizes = (0..n).map(|_| a.int()).collect::<Result<Vec<_>>>()?;
                let order = self.order(a.int()?)?;
                Kind::Darray {
                    size,
                    rank,
                    gsizes,
                    distribs,
                    dargs,
                    psizes,
                    order,
                    old: self.child(&mut returned, 0, depth)?,
                }
            }
            Combiner::Resized => Kind::Resized {
                lb: a.addr()?,
                extent: a.addr()?,
                old: self.child(&mut returned, 0, depth)?,
            },
            Combiner::ValueIndex => Kind::ValueIndex {
                value: self.child(&mut returned, 0, depth)?,
                index: self.child(&mut returned, 1, depth)?,
            },
        };
        if !a.done() || returned.derived.iter().any(|d| d.is_none()) {
            return Err(layout(combiner));
        }
        let mut node = Node::new(kind);
        if !node.is_predefined() {
            node.large = large;
            node.name = mpi::get_name(t)?;
            if depth > 0 && l.is_open_mpi != 0 {
                // Open MPI's get_contents returns a duplicate of each derived
                // argument, which it names "Dup <original name>".
                node.name = node.name.and_then(|n| {
                    let rest = n.strip_prefix(b"Dup ".as_slice()).unwrap_or(&n).to_vec();
                    (!rest.is_empty()).then_some(rest)
                });
            }
            if node.name.as_ref().is_some_and(|n| n.len() > MAX_NAME_LEN) {
                return Err(Error::unsupported(format!("a type name longer than {MAX_NAME_LEN} bytes")));
            }
        }
        Ok(node)
    }

    fn child(&mut self, returned: &mut Returned, i: usize, depth: usize) -> Result<Box<Node>> {
        let t = *returned.types.get(i).ok_or_else(|| Error::invalid("MPI_Type_get_contents returned too few datatypes"))?;
        let node = self.node(t, depth + 1)?;
        returned.derived[i] = Some(!node.is_predefined());
        Ok(Box::new(node))
    }

    fn order(&self, local: i64) -> Result<Order> {
        let l = &self.local.constants;
        match local {
            x if x == l.order_c as i64 => Ok(Order::C),
            x if x == l.order_fortran as i64 => Ok(Order::Fortran),
            x => Err(Error::unsupported(format!("unknown array order {x} from MPI_Type_get_contents"))),
        }
    }

    fn distribution(&self, local: i64) -> Result<Distribution> {
        let l = &self.local.constants;
        match local {
            x if x == l.distribute_block as i64 => Ok(Distribution::Block),
            x if x == l.distribute_cyclic as i64 => Ok(Distribution::Cyclic),
            x if x == l.distribute_none as i64 => Ok(Distribution::None),
            x => Err(Error::unsupported(format!("unknown distribution {x} from MPI_Type_get_contents"))),
        }
    }
}

fn undefined(v: i64, local_undefined: c_int) -> i64 {
    if v == local_undefined as i64 {
        UNDEFINED
    } else {
        v
    }
}

fn layout(c: Combiner) -> Error {
    Error::unsupported(format!("MPI_Type_get_contents returned an unexpected layout for {}", c.mpi_name()))
}

/// Reads a combiner's arguments from get_contents' arrays. Classic calls
/// put counts in `ints` and byte displacements in `addrs`; large-count
/// calls put both in `counts`, in argument order, and keep only true C ints
/// (ndims, order, distributions) in `ints`. The three cursors make one
/// description of each combiner serve both layouts.
struct Args<'a> {
    ints: &'a [c_int],
    addrs: &'a [MPI_Aint],
    counts: &'a [MPI_Count],
    large: bool,
    i: usize,
    a: usize,
    c: usize,
}

impl<'a> Args<'a> {
    fn new(ints: &'a [c_int], addrs: &'a [MPI_Aint], counts: &'a [MPI_Count], large: bool) -> Self {
        Args {
            ints,
            addrs,
            counts,
            large,
            i: 0,
            a: 0,
            c: 0,
        }
    }

    fn short() -> Error {
        Error::unsupported("MPI_Type_get_contents returned fewer arguments than the combiner takes")
    }

    /// A true C int argument.
    fn int(&mut self) -> Result<i64> {
        let v = *self.ints.get(self.i).ok_or_else(Self::short)?;
        self.i += 1;
        Ok(v as i64)
    }

    /// A count-like argument: an int in classic calls, an MPI_Count in `_c` ones.
    fn cnt(&mut self) -> Result<i64> {
        if self.large {
            let v = *self.counts.get(self.c).ok_or_else(Self::short)?;
            self.c += 1;
            Ok(v)
        } else {
            self.int()
        }
    }

    /// A byte displacement: an MPI_Aint in classic calls, an MPI_Count in `_c` ones.
    fn addr(&mut self) -> Result<i64> {
        if self.large {
            self.cnt()
        } else {
            let v = *self.addrs.get(self.a).ok_or_else(Self::short)?;
            self.a += 1;
            Ok(v as i64)
        }
    }

    /// An array length given as a count.
    fn len(&mut self) -> Result<usize> {
        usize::try_from(self.cnt()?).map_err(|_| Self::short())
    }

    /// An array length given as a C int (ndims).
    fn int_len(&mut self) -> Result<usize> {
        usize::try_from(self.int()?).map_err(|_| Self::short())
    }

    fn cnts(&mut self, n: usize) -> Result<Vec<i64>> {
        if self.large {
            let s = self.counts.get(self.c..self.c + n).ok_or_else(Self::short)?;
            self.c += n;
            Ok(s.to_vec())
        } else {
            let s = self.ints.get(self.i..self.i + n).ok_or_else(Self::short)?;
            self.i += n;
            Ok(s.iter().map(|&v| v as i64).collect())
        }
    }

    fn addrs(&mut self, n: usize) -> Result<Vec<i64>> {
        if self.large {
            self.cnts(n)
        } else {
            let s = self.addrs.get(self.a..self.a + n).ok_or_else(Self::short)?;
            self.a += n;
            Ok(s.iter().map(|&v| v as i64).collect())
        }
    }

    fn done(&self) -> bool {
        self.i == self.ints.len() && self.a == self.addrs.len() && self.c == self.counts.len()
    }
}
