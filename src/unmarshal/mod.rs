//! The tree rebuilder: a validated tree back into an MPI datatype, with the same
//! constructors and arguments, so the result is constructor-equivalent to
//! the type the tree was decoded from. Where the local MPI lacks a
//! construct, a typemap-equivalent one is built instead, or the tree is
//! refused before any handle is created. On error, every handle created so
//! far is freed.

use crate::error::{Error, Result};
use crate::format::codes::{Combiner, Distribution, Order, Predefined, DFLT_DARG, UNDEFINED};
use crate::format::tree::{self, Bounds, Failure, Kind, Node};
use crate::marshal::attributes::{self, Registry};
use crate::marshal::cache;
use crate::mpi::construct::{construct, Call, Darray, Subarray};
use crate::mpi::f90::{self, F90};
use crate::mpi::{self, check, Datatype, Handles, Local, MPI_Aint, OwnedDatatype};
use crate::scratch::with_buffer;
use std::ffi::CStr;
use std::os::raw::c_int;

pub mod bytes;
pub mod direct;

/// Builds a new datatype from `tree`. A named tree returns the predefined
/// handle itself; anything else is a new handle the caller must free.
/// `typerep` is the representation's name, passed to attribute callbacks.
pub fn build(tree: &Node, typerep: &'static CStr) -> Result<Datatype> {
    tree::validate(tree)?;
    let local = mpi::local();
    check_local(tree, local).map_err(Failure::into_error)?;
    with_buffer(&BUFFERS, |buffers| {
        let mut builder = Builder {
            local,
            buffers,
            keyvals: attributes::snapshot(),
            typerep,
        };
        Ok(builder.build(tree)?.into_raw())
    })
}

/// Refuses what the local MPI cannot build, before anything is built.
fn check_local(node: &Node, local: &Local) -> std::result::Result<(), Failure> {
    let at = |what: String| Err(Failure::new(Error::unsupported(what)));
    match &node.kind {
        Kind::Named(p) if local.datatype(*p).is_none() => {
            return at(format!("{} is not defined by this MPI", p.mpi_name()));
        }
        Kind::ValueIndex { .. } if local.constants.have_value_index == 0 => {
            return at("MPI_Type_get_value_index needs MPI 4.1".into());
        }
        _ => {}
    }
    if node.large && !local.has_large_count() && !fits_classic(node) {
        return at(format!(
            "{} with counts beyond a C int needs MPI-4 large-count constructors",
            node.combiner().mpi_name()
        ));
    }
    if let Some(name) = &node.name {
        if name.len() > local.max_name_len() {
            return at(format!(
                "a name of {} bytes is longer than this MPI's limit of {}",
                name.len(),
                local.max_name_len()
            ));
        }
    }
    let markers_rewritten =
        matches!(node.kind, Kind::Struct { .. }) && local.datatype(Predefined::LB).is_none();
    for (i, child) in node.children().iter().enumerate() {
        if markers_rewritten && matches!(child.kind, Kind::Named(p) if p.is_marker()) {
            continue; // becomes MPI_Type_create_resized
        }
        check_local(child, local).map_err(|f| f.within(i))?;
    }
    Ok(())
}

/// Whether a large-count node's arguments all fit the classic constructor.
fn fits_classic(node: &Node) -> bool {
    let int = |v: &i64| i32::try_from(*v).is_ok();
    let aint = |v: &i64| MPI_Aint::try_from(*v).is_ok();
    match &node.kind {
        Kind::Contiguous { count, .. } => int(count),
        Kind::Vector {
            count,
            blocklength,
            stride,
            ..
        } => [count, blocklength, stride].into_iter().all(int),
        Kind::Hvector {
            count, blocklength, ..
        } => int(count) && int(blocklength),
        Kind::Indexed {
            blocklengths,
            displacements,
            ..
        } => blocklengths.iter().chain(displacements).all(int) && int(&(blocklengths.len() as i64)),
        Kind::Hindexed {
            blocklengths,
            displacements,
            ..
        }
        | Kind::Struct {
            blocklengths,
            displacements,
            ..
        } => {
            blocklengths.iter().all(int)
                && displacements.iter().all(aint)
                && int(&(blocklengths.len() as i64))
        }
        Kind::IndexedBlock {
            blocklength,
            displacements,
            ..
        } => {
            int(blocklength) && displacements.iter().all(int) && int(&(displacements.len() as i64))
        }
        Kind::HindexedBlock {
            blocklength,
            displacements,
            ..
        } => {
            int(blocklength) && displacements.iter().all(aint) && int(&(displacements.len() as i64))
        }
        Kind::Subarray {
            sizes,
            subsizes,
            starts,
            ..
        } => sizes.iter().chain(subsizes).chain(starts).all(int),
        Kind::Darray { gsizes, .. } => gsizes.iter().all(int),
        Kind::Resized { lb, extent, .. } => aint(lb) && aint(extent),
        _ => true,
    }
}

struct Builder<'a> {
    local: &'static Local,
    buffers: &'a mut Buffers,
    keyvals: Option<Registry>,
    typerep: &'static CStr,
}

/// The builder's working memory, kept per thread across calls.
#[derive(Default)]
struct Buffers {
    /// Handles of the children built so far for the nodes under
    /// construction, innermost node last (a stack shared by all levels),
    /// each owned (built here) or borrowed (predefined).
    kids: Handles,
    conv: Conv,
}

thread_local! {
    static BUFFERS: std::cell::RefCell<Buffers> = std::cell::RefCell::new(Buffers::default());
}

/// Buffers for converting 64-bit arguments to the C types of classic
/// constructors, reused across the nodes of one tree.
#[derive(Default)]
struct Conv {
    a: Vec<c_int>,
    b: Vec<c_int>,
    c: Vec<c_int>,
    addrs: Vec<MPI_Aint>,
}

/// `v` as C ints in `buf`.
fn ints<'a>(buf: &'a mut Vec<c_int>, v: &[i64]) -> &'a [c_int] {
    buf.clear();
    buf.extend(v.iter().map(|&x| x as c_int));
    buf
}

/// `v` as MPI_Aints in `buf`.
fn aints<'a>(buf: &'a mut Vec<MPI_Aint>, v: &[i64]) -> &'a [MPI_Aint] {
    buf.clear();
    buf.extend(v.iter().map(|&x| x as MPI_Aint));
    buf
}

impl Builder<'_> {
    /// The type of `node`: a predefined handle (borrowed) or a new one.
    fn build(&mut self, node: &Node) -> Result<OwnedDatatype> {
        if let Kind::Named(p) = &node.kind {
            let handle = self.local.datatype(*p).ok_or_else(|| {
                Error::unsupported(format!("{} is not defined by this MPI", p.mpi_name()))
            })?;
            return Ok(OwnedDatatype::borrowed(handle));
        }
        if let Some(handle) = self.f90(node)? {
            return Ok(OwnedDatatype::borrowed(handle));
        }
        let base = self.buffers.kids.len();
        let result = self.build_derived(node, base);
        // This node's children are freed on success and error alike.
        self.buffers.kids.truncate(base);
        result
    }

    fn build_derived(&mut self, node: &Node, base: usize) -> Result<OwnedDatatype> {
        let rewrite_markers = matches!(node.kind, Kind::Struct { .. })
            && self.local.datatype(Predefined::LB).is_none();
        // A struct whose members are all one subtree is built on one
        // handle, as its writer most likely had it: MPICH pads a struct's
        // extent only when its members are not all the same handle.
        let shared = shared_members(node);
        for (i, child) in node.children().iter().enumerate() {
            let built = if rewrite_markers && matches!(child.kind, Kind::Named(p) if p.is_marker())
            {
                OwnedDatatype::borrowed(self.local.datatype_null())
            } else if shared && i > 0 {
                OwnedDatatype::borrowed(self.buffers.kids.raw()[base])
            } else {
                self.build(child)?
            };
            self.buffers.kids.push(built);
        }
        let mut built = self.construct_here(node, base)?;
        if let Some(recorded) = node.bounds {
            built = self.restore_bounds(node, base, built, recorded, shared)?;
        }
        // On error `built` is dropped, which frees it.
        self.finish(node, built.get())?;
        Ok(built)
    }

    /// The node's constructor on the children at `base..` of the stack.
    fn construct_here(&mut self, node: &Node, base: usize) -> Result<OwnedDatatype> {
        let kids = std::mem::take(&mut self.buffers.kids);
        let handle = self.construct(node, &kids.raw()[base..]);
        self.buffers.kids = kids;
        handle
    }

    /// Gives `built` the bounds its writer recorded (spec/external.md §10,
    /// S4). Where the local MPI computed others: a struct built on one
    /// shared member handle is built again on distinct ones (the writer's
    /// members were equal but distinct handles); where that does not
    /// help, the result is resized to the recorded bounds and marked as
    /// an extent correction. On error `built` is freed (dropped).
    fn restore_bounds(
        &mut self,
        node: &Node,
        base: usize,
        mut built: OwnedDatatype,
        recorded: Bounds,
        shared: bool,
    ) -> Result<OwnedDatatype> {
        let keeps = |t: &OwnedDatatype| {
            mpi::extent(t.get()).map(|(lb, extent)| Bounds { lb, extent } == recorded)
        };
        if keeps(&built)? {
            return Ok(built);
        }
        if shared {
            drop(built);
            for (i, child) in node.children().iter().enumerate().skip(1) {
                let b = self.build(child)?;
                self.buffers.kids.replace(base + i, b);
            }
            built = self.construct_here(node, base)?;
            if keeps(&built)? {
                return Ok(built);
            }
        }
        // The bounds fit MPI_Aint (validate: lb + extent does not overflow
        // 64 bits). `built` is freed when this returns: the resized type
        // keeps what it needs of it.
        let (lb, extent) = (recorded.lb as MPI_Aint, recorded.extent as MPI_Aint);
        let corrected = construct(Call::Resized(built.get(), lb, extent), Combiner::Resized)?;
        cache::mark_correction(corrected.get())?;
        Ok(corrected)
    }

    /// Names a built level, marks it when the node is an extent
    /// correction, and sets its attributes (last: freeing the type on
    /// error runs the delete callbacks of those already set).
    fn finish(&self, node: &Node, t: Datatype) -> Result<()> {
        if let Some(name) = &node.name {
            mpi::set_name(t, name)?;
        }
        if node.correction {
            cache::mark_correction(t)?;
        }
        attributes::apply(self.keyvals.as_ref(), self.typerep, t, &node.attrs)
    }

    fn f90(&self, node: &Node) -> Result<Option<Datatype>> {
        let l = &self.local.constants;
        let local_undef = |v: i64| {
            if v == UNDEFINED {
                l.undefined
            } else {
                v as c_int
            }
        };
        let (which, p, r) = match &node.kind {
            Kind::F90Real { p, r } => (F90::Real, *p, *r),
            Kind::F90Complex { p, r } => (F90::Complex, *p, *r),
            Kind::F90Integer { r } => (F90::Integer, UNDEFINED, *r),
            _ => return Ok(None),
        };
        match f90::create(which, local_undef(p), local_undef(r), l.undefined) {
            Ok(t) => Ok(Some(t)),
            Err(rc) if rc == mpi::UNSUPPORTED => {
                check(rc, "MPI_Type_create_f90_*")?;
                unreachable!("check refuses UNSUPPORTED")
            }
            Err(rc) => Err(Error::unsupported(format!(
                "this MPI has no Fortran {} kind with precision {p} and range {r} ({})",
                ["REAL", "COMPLEX", "INTEGER"][which as usize],
                mpi::error_string(rc)
            ))),
        }
    }

    /// Calls the node's constructor on already-built children (off the
    /// recursion path: deep trees cost one small frame per level).
    #[inline(never)]
    fn construct(&mut self, node: &Node, kids: &[Datatype]) -> Result<OwnedDatatype> {
        let large = node.large && self.local.has_large_count();
        let mpi1 = self.local.has_mpi1();
        // Classic constructors take C ints and MPI_Aints (tree::validate
        // checked that the values fit); large ones take the tree's 64-bit
        // values as they are.
        let Conv { a, b, c, addrs } = &mut self.buffers.conv;
        let i = |v: i64| v as c_int;
        let call = match &node.kind {
            Kind::Named(_)
            | Kind::F90Real { .. }
            | Kind::F90Complex { .. }
            | Kind::F90Integer { .. } => {
                unreachable!("built without a constructor")
            }
            Kind::Dup(_) => Call::Dup(kids[0]),
            Kind::Contiguous { count, .. } if large => Call::ContiguousC(*count, kids[0]),
            Kind::Contiguous { count, .. } => Call::Contiguous(i(*count), kids[0]),
            Kind::Vector {
                count,
                blocklength,
                stride,
                ..
            } if large => Call::VectorC([*count, *blocklength, *stride], kids[0]),
            Kind::Vector {
                count,
                blocklength,
                stride,
                ..
            } => Call::Vector([i(*count), i(*blocklength), i(*stride)], kids[0]),
            Kind::Hvector {
                count,
                blocklength,
                stride,
                legacy,
                ..
            } => {
                if large {
                    Call::HvectorC([*count, *blocklength, *stride], kids[0])
                } else if *legacy && mpi1 {
                    Call::HvectorMpi1([i(*count), i(*blocklength)], *stride as MPI_Aint, kids[0])
                } else {
                    Call::Hvector([i(*count), i(*blocklength)], *stride as MPI_Aint, kids[0])
                }
            }
            Kind::Indexed {
                blocklengths,
                displacements,
                ..
            } => {
                if large {
                    Call::IndexedC(blocklengths, displacements, kids[0])
                } else {
                    Call::Indexed(ints(a, blocklengths), ints(b, displacements), kids[0])
                }
            }
            Kind::Hindexed {
                blocklengths,
                displacements,
                legacy,
                ..
            } => {
                if large {
                    Call::HindexedC(blocklengths, displacements, kids[0])
                } else if *legacy && mpi1 {
                    Call::HindexedMpi1(ints(a, blocklengths), aints(addrs, displacements), kids[0])
                } else {
                    Call::Hindexed(ints(a, blocklengths), aints(addrs, displacements), kids[0])
                }
            }
            Kind::IndexedBlock {
                blocklength,
                displacements,
                ..
            } => {
                if large {
                    Call::IndexedBlockC(*blocklength, displacements, kids[0])
                } else {
                    Call::IndexedBlock(i(*blocklength), ints(b, displacements), kids[0])
                }
            }
            Kind::HindexedBlock {
                blocklength,
                displacements,
                ..
            } => {
                if large {
                    Call::HindexedBlockC(*blocklength, displacements, kids[0])
                } else {
                    Call::HindexedBlock(i(*blocklength), aints(addrs, displacements), kids[0])
                }
            }
            Kind::Struct {
                blocklengths,
                displacements,
                types,
                legacy,
            } => {
                let has_markers = types
                    .iter()
                    .any(|t| matches!(t.kind, Kind::Named(p) if p.is_marker()));
                if has_markers && self.local.datatype(Predefined::LB).is_none() {
                    return self.struct_without_markers(blocklengths, displacements, types, kids);
                }
                if large {
                    Call::StructC(blocklengths, displacements, kids)
                } else if *legacy && mpi1 {
                    Call::StructMpi1(ints(a, blocklengths), aints(addrs, displacements), kids)
                } else {
                    Call::Struct(ints(a, blocklengths), aints(addrs, displacements), kids)
                }
            }
            Kind::Subarray {
                sizes,
                subsizes,
                starts,
                order,
                ..
            } => {
                let order = local_order(self.local, *order);
                if large {
                    Call::SubarrayC(Subarray {
                        sizes,
                        subsizes,
                        starts,
                        order,
                        old: kids[0],
                    })
                } else {
                    Call::Subarray(Subarray {
                        sizes: ints(a, sizes),
                        subsizes: ints(b, subsizes),
                        starts: ints(c, starts),
                        order,
                        old: kids[0],
                    })
                }
            }
            Kind::Darray {
                size,
                rank,
                gsizes,
                distribs,
                dargs,
                psizes,
                order,
                ..
            } => {
                let l = &self.local.constants;
                let distribs: Vec<c_int> = distribs
                    .iter()
                    .map(|d| match d {
                        Distribution::Block => l.distribute_block,
                        Distribution::Cyclic => l.distribute_cyclic,
                        Distribution::None => l.distribute_none,
                    })
                    .collect();
                let dargs: Vec<c_int> = dargs
                    .iter()
                    .map(|&d| {
                        if d == DFLT_DARG {
                            l.distribute_dflt_darg
                        } else {
                            d as c_int
                        }
                    })
                    .collect();
                let order = local_order(self.local, *order);
                let psizes = ints(c, psizes);
                let call = if large {
                    Call::DarrayC(Darray {
                        size: i(*size),
                        rank: i(*rank),
                        gsizes,
                        distribs: &distribs,
                        dargs: &dargs,
                        psizes,
                        order,
                        old: kids[0],
                    })
                } else {
                    Call::Darray(Darray {
                        size: i(*size),
                        rank: i(*rank),
                        gsizes: ints(a, gsizes),
                        distribs: &distribs,
                        dargs: &dargs,
                        psizes,
                        order,
                        old: kids[0],
                    })
                };
                return construct(call, node.combiner());
            }
            Kind::Resized { lb, extent, .. } => {
                if large {
                    Call::ResizedC(kids[0], *lb, *extent)
                } else {
                    Call::Resized(kids[0], *lb as MPI_Aint, *extent as MPI_Aint)
                }
            }
            Kind::ValueIndex { .. } => Call::ValueIndex(kids[0], kids[1]),
        };
        construct(call, node.combiner())
    }

    /// A struct with MPI_LB / MPI_UB members, on an MPI without them: the
    /// struct of the other members, resized to the bounds the markers set.
    /// Markers at a struct's own level decide its bounds, whatever bounds its
    /// members carry: this is what MPICH computes (the cross-implementation
    /// test compares the two on the HDF5-derived type).
    fn struct_without_markers(
        &self,
        blocklengths: &[i64],
        displacements: &[i64],
        types: &[Node],
        kids: &[Datatype],
    ) -> Result<OwnedDatatype> {
        let (mut lbs, mut ubs) = (Vec::new(), Vec::new());
        let (mut bl, mut disp, mut handles) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..types.len() {
            match types[i].kind {
                Kind::Named(p) if p == Predefined::LB => {
                    if blocklengths[i] > 0 {
                        lbs.push(displacements[i]);
                    }
                }
                Kind::Named(p) if p == Predefined::UB => {
                    if blocklengths[i] > 0 {
                        ubs.push(displacements[i]);
                    }
                }
                _ => {
                    bl.push(blocklengths[i] as c_int);
                    disp.push(displacements[i] as MPI_Aint);
                    handles.push(kids[i]);
                }
            }
        }
        // Freed (dropped) on every path below: the result keeps what it
        // needs of it.
        let inner = construct(Call::Struct(&bl, &disp, &handles), Combiner::Struct)?;
        let geometry = mpi::geometry(inner.get())?;
        // Checked: displacements may be anywhere in the 64-bit range, and
        // `ub - lb` (or the struct's own upper bound) overflowed: a panic
        // in a debug build, which also leaked `inner`, and a wrong extent
        // in an optimized one. Issue 5, tests/errors.rs.
        let lb = lbs.into_iter().min().unwrap_or(geometry.lb);
        let ub = match ubs.into_iter().max() {
            Some(ub) => Some(ub),
            None => geometry.lb.checked_add(geometry.extent),
        };
        let Some(extent) = ub.and_then(|ub| ub.checked_sub(lb)) else {
            return Err(Error::invalid(
                "MPI_COMBINER_STRUCT: the bounds its MPI_LB/MPI_UB members set overflow 64 bits",
            ));
        };
        construct(
            Call::Resized(inner.get(), lb as MPI_Aint, extent as MPI_Aint),
            Combiner::Resized,
        )
    }
}

/// The local MPI's constant for an array order.
fn local_order(local: &Local, order: Order) -> c_int {
    match order {
        Order::C => local.constants.order_c,
        Order::Fortran => local.constants.order_fortran,
    }
}

/// Whether `node` is a struct of two or more members that are all the
/// same derived subtree (names and attributes included).
fn shared_members(node: &Node) -> bool {
    match &node.kind {
        Kind::Struct { types, .. } => {
            types.len() > 1
                && !types[0].is_predefined()
                && types[1..].iter().all(|t| t == &types[0])
        }
        _ => false,
    }
}
