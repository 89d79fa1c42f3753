//! The encoder: a validated tree back into an MPI datatype, with the same
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
use crate::mpi::{self, check, shim, Datatype, Local, MPI_Aint, MPI_Count};
use crate::scratch::with_buffer;
use mpi_sys as ffi;
use std::ffi::CStr;
use std::os::raw::c_int;

pub mod direct;

/// Builds a new datatype from `tree`. A named tree returns the predefined
/// handle itself; anything else is a new handle the caller must free.
/// `typerep` is the representation's name, passed to attribute callbacks.
pub fn encode(tree: &Node, typerep: &'static CStr) -> Result<Datatype> {
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
        Ok(builder.build(tree)?.handle)
    })
}

/// A handle the builder made, and whether it is the builder's to free.
struct Built {
    handle: Datatype,
    derived: bool,
}

impl Built {
    fn release(self) {
        if self.derived {
            // Nothing useful can be done with a failure while cleaning up.
            let _ = mpi::free(self.handle);
        }
    }
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
    /// construction, innermost node last (a stack shared by all levels).
    kids: Vec<Datatype>,
    /// Whether each of `kids` is the builder's to free.
    derived: Vec<bool>,
    conv: Conv,
}

thread_local! {
    static BUFFERS: std::cell::RefCell<Buffers> = std::cell::RefCell::new(Buffers::default());
}

/// Buffers for converting 64-bit arguments to the C types of classic
/// constructors, reused across the nodes of one tree. Each method fills
/// its own buffer and returns a pointer valid until that buffer is filled
/// again.
#[derive(Default)]
struct Conv {
    a: Vec<c_int>,
    b: Vec<c_int>,
    c: Vec<c_int>,
    addrs: Vec<MPI_Aint>,
}

fn fill_ints(buf: &mut Vec<c_int>, v: &[i64]) -> *mut c_int {
    buf.clear();
    buf.extend(v.iter().map(|&x| x as c_int));
    buf.as_mut_ptr()
}

impl Conv {
    fn i1(&mut self, v: &[i64]) -> *mut c_int {
        fill_ints(&mut self.a, v)
    }
    fn i2(&mut self, v: &[i64]) -> *mut c_int {
        fill_ints(&mut self.b, v)
    }
    fn i3(&mut self, v: &[i64]) -> *mut c_int {
        fill_ints(&mut self.c, v)
    }
    fn a1(&mut self, v: &[i64]) -> *mut MPI_Aint {
        self.addrs.clear();
        self.addrs.extend(v.iter().map(|&x| x as MPI_Aint));
        self.addrs.as_mut_ptr()
    }
}

impl Builder<'_> {
    fn build(&mut self, node: &Node) -> Result<Built> {
        if let Kind::Named(p) = &node.kind {
            let handle = self.local.datatype(*p).ok_or_else(|| {
                Error::unsupported(format!("{} is not defined by this MPI", p.mpi_name()))
            })?;
            return Ok(Built {
                handle,
                derived: false,
            });
        }
        if let Some(handle) = self.f90(node)? {
            return Ok(Built {
                handle,
                derived: false,
            });
        }
        let base = self.buffers.kids.len();
        let result = self.build_derived(node, base);
        // This node's children are released on success and error alike.
        for i in base..self.buffers.kids.len() {
            if self.buffers.derived[i] {
                let _ = mpi::free(self.buffers.kids[i]);
            }
        }
        self.buffers.kids.truncate(base);
        self.buffers.derived.truncate(base);
        result
    }

    fn build_derived(&mut self, node: &Node, base: usize) -> Result<Built> {
        let rewrite_markers = matches!(node.kind, Kind::Struct { .. })
            && self.local.datatype(Predefined::LB).is_none();
        // A struct whose members are all one subtree is built on one
        // handle, as its writer most likely had it: MPICH pads a struct's
        // extent only when its members are not all the same handle.
        let shared = shared_members(node);
        for (i, child) in node.children().iter().enumerate() {
            let built = if rewrite_markers && matches!(child.kind, Kind::Named(p) if p.is_marker())
            {
                Built {
                    handle: self.local.datatype_null(),
                    derived: false,
                }
            } else if shared && i > 0 {
                Built {
                    handle: self.buffers.kids[base],
                    derived: false,
                }
            } else {
                self.build(child)?
            };
            self.buffers.kids.push(built.handle);
            self.buffers.derived.push(built.derived);
        }
        let mut built = Built {
            handle: self.construct_here(node, base)?,
            derived: true,
        };
        if let Some(recorded) = node.bounds {
            built = self.restore_bounds(node, base, built, recorded, shared)?;
        }
        let finished = self.finish(node, built.handle);
        if let Err(e) = finished {
            built.release();
            return Err(e);
        }
        Ok(built)
    }

    /// The node's constructor on the children at `base..` of the stack.
    fn construct_here(&mut self, node: &Node, base: usize) -> Result<Datatype> {
        let kids = std::mem::take(&mut self.buffers.kids);
        let handle = self.construct(node, &kids[base..]);
        self.buffers.kids = kids;
        handle
    }

    /// Gives `built` the bounds its writer recorded (spec/external.md §10,
    /// S4). Where the local MPI computed others: a struct built on one
    /// shared member handle is built again on distinct ones (the writer's
    /// members were equal but distinct handles); where that does not
    /// help, the result is resized to the recorded bounds and marked as
    /// an extent correction. On error `built` is freed.
    fn restore_bounds(
        &mut self,
        node: &Node,
        base: usize,
        built: Built,
        recorded: Bounds,
        shared: bool,
    ) -> Result<Built> {
        // Whether `t` has the recorded bounds; on error `t` is freed.
        let keeps = |t: Built| match mpi::extent(t.handle) {
            Ok((lb, extent)) => Ok((Bounds { lb, extent } == recorded, t)),
            Err(e) => {
                t.release();
                Err(e)
            }
        };
        let (kept, mut built) = keeps(built)?;
        if kept {
            return Ok(built);
        }
        if shared {
            built.release();
            for (i, child) in node.children().iter().enumerate().skip(1) {
                let b = self.build(child)?;
                self.buffers.kids[base + i] = b.handle;
                self.buffers.derived[base + i] = b.derived;
            }
            let rebuilt = Built {
                handle: self.construct_here(node, base)?,
                derived: true,
            };
            let kept;
            (kept, built) = keeps(rebuilt)?;
            if kept {
                return Ok(built);
            }
        }
        let mut out = self.local.datatype_null();
        // SAFETY: built.handle is live; out is a local. The bounds fit
        // MPI_Aint (validate: lb + extent does not overflow 64 bits).
        let rc = unsafe {
            ffi::MPI_Type_create_resized(
                built.handle,
                recorded.lb as MPI_Aint,
                recorded.extent as MPI_Aint,
                &mut out,
            )
        };
        built.release();
        check(rc, "MPI_Type_create_resized")?;
        let corrected = Built {
            handle: out,
            derived: true,
        };
        if let Err(e) = cache::mark_correction(corrected.handle) {
            corrected.release();
            return Err(e);
        }
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
        let mut out = self.local.datatype_null();
        let (which, p, r) = match &node.kind {
            Kind::F90Real { p, r } => (0, *p, *r),
            Kind::F90Complex { p, r } => (1, *p, *r),
            Kind::F90Integer { r } => (2, UNDEFINED, *r),
            _ => return Ok(None),
        };
        // SAFETY: out is a valid local; F90 types are predefined and never freed.
        let rc =
            unsafe { shim::mpixm_type_create_f90(which, local_undef(p), local_undef(r), &mut out) };
        if rc != 0 && rc != shim::UNSUPPORTED {
            return Err(Error::unsupported(format!(
                "this MPI has no Fortran {} kind with precision {p} and range {r} ({})",
                ["REAL", "COMPLEX", "INTEGER"][which as usize],
                mpi::error_string(rc)
            )));
        }
        check(rc, "MPI_Type_create_f90_*")?;
        Ok(Some(out))
    }

    /// Calls the node's constructor on already-built children (off the
    /// recursion path: deep trees cost one small frame per level).
    #[inline(never)]
    fn construct(&mut self, node: &Node, kids: &[Datatype]) -> Result<Datatype> {
        let large = node.large && self.local.has_large_count();
        let mut out = self.local.datatype_null();
        let o = &mut out as *mut Datatype;
        // SAFETY (every call below): array arguments are Vecs of exactly the
        // counts passed (checked by tree::validate), `o` points to a local,
        // and every child handle is a live handle built above.
        let rc = unsafe {
            match &node.kind {
                Kind::Named(_)
                | Kind::F90Real { .. }
                | Kind::F90Complex { .. }
                | Kind::F90Integer { .. } => {
                    unreachable!("built without a constructor")
                }
                Kind::Dup(_) => ffi::MPI_Type_dup(kids[0], o),
                Kind::Contiguous { count, .. } => {
                    if large {
                        shim::mpixm_type_contiguous_c(*count, kids[0], o)
                    } else {
                        ffi::MPI_Type_contiguous(*count as c_int, kids[0], o)
                    }
                }
                Kind::Vector {
                    count,
                    blocklength,
                    stride,
                    ..
                } => {
                    if large {
                        shim::mpixm_type_vector_c(*count, *blocklength, *stride, kids[0], o)
                    } else {
                        ffi::MPI_Type_vector(
                            *count as c_int,
                            *blocklength as c_int,
                            *stride as c_int,
                            kids[0],
                            o,
                        )
                    }
                }
                Kind::Hvector {
                    count,
                    blocklength,
                    stride,
                    legacy,
                    ..
                } => {
                    if large {
                        shim::mpixm_type_create_hvector_c(*count, *blocklength, *stride, kids[0], o)
                    } else if *legacy && self.local.has_mpi1() {
                        shim::mpixm_type_hvector(
                            *count as c_int,
                            *blocklength as c_int,
                            *stride as MPI_Aint,
                            kids[0],
                            o,
                        )
                    } else {
                        ffi::MPI_Type_create_hvector(
                            *count as c_int,
                            *blocklength as c_int,
                            *stride as MPI_Aint,
                            kids[0],
                            o,
                        )
                    }
                }
                Kind::Indexed {
                    blocklengths,
                    displacements,
                    ..
                } => {
                    let n = blocklengths.len();
                    if large {
                        shim::mpixm_type_indexed_c(
                            n as MPI_Count,
                            blocklengths.as_ptr(),
                            displacements.as_ptr(),
                            kids[0],
                            o,
                        )
                    } else {
                        ffi::MPI_Type_indexed(
                            n as c_int,
                            self.buffers.conv.i1(blocklengths),
                            self.buffers.conv.i2(displacements),
                            kids[0],
                            o,
                        )
                    }
                }
                Kind::Hindexed {
                    blocklengths,
                    displacements,
                    legacy,
                    ..
                } => {
                    let n = blocklengths.len();
                    if large {
                        shim::mpixm_type_create_hindexed_c(
                            n as MPI_Count,
                            blocklengths.as_ptr(),
                            displacements.as_ptr(),
                            kids[0],
                            o,
                        )
                    } else if *legacy && self.local.has_mpi1() {
                        shim::mpixm_type_hindexed(
                            n as c_int,
                            self.buffers.conv.i1(blocklengths),
                            self.buffers.conv.a1(displacements),
                            kids[0],
                            o,
                        )
                    } else {
                        ffi::MPI_Type_create_hindexed(
                            n as c_int,
                            self.buffers.conv.i1(blocklengths),
                            self.buffers.conv.a1(displacements),
                            kids[0],
                            o,
                        )
                    }
                }
                Kind::IndexedBlock {
                    blocklength,
                    displacements,
                    ..
                } => {
                    let n = displacements.len();
                    if large {
                        shim::mpixm_type_create_indexed_block_c(
                            n as MPI_Count,
                            *blocklength,
                            displacements.as_ptr(),
                            kids[0],
                            o,
                        )
                    } else {
                        ffi::MPI_Type_create_indexed_block(
                            n as c_int,
                            *blocklength as c_int,
                            self.buffers.conv.i2(displacements),
                            kids[0],
                            o,
                        )
                    }
                }
                Kind::HindexedBlock {
                    blocklength,
                    displacements,
                    ..
                } => {
                    let n = displacements.len();
                    if large {
                        shim::mpixm_type_create_hindexed_block_c(
                            n as MPI_Count,
                            *blocklength,
                            displacements.as_ptr(),
                            kids[0],
                            o,
                        )
                    } else {
                        ffi::MPI_Type_create_hindexed_block(
                            n as c_int,
                            *blocklength as c_int,
                            self.buffers.conv.a1(displacements),
                            kids[0],
                            o,
                        )
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
                        return self.struct_without_markers(
                            blocklengths,
                            displacements,
                            types,
                            kids,
                        );
                    }
                    let n = blocklengths.len();
                    if large {
                        shim::mpixm_type_create_struct_c(
                            n as MPI_Count,
                            blocklengths.as_ptr(),
                            displacements.as_ptr(),
                            kids.as_ptr(),
                            o,
                        )
                    } else if *legacy && self.local.has_mpi1() {
                        let mut k = kids.to_vec();
                        shim::mpixm_type_struct(
                            n as c_int,
                            self.buffers.conv.i1(blocklengths),
                            self.buffers.conv.a1(displacements),
                            k.as_mut_ptr(),
                            o,
                        )
                    } else {
                        ffi::MPI_Type_create_struct(
                            n as c_int,
                            self.buffers.conv.i1(blocklengths),
                            self.buffers.conv.a1(displacements),
                            kids.as_ptr(),
                            o,
                        )
                    }
                }
                Kind::Subarray {
                    sizes,
                    subsizes,
                    starts,
                    order,
                    ..
                } => {
                    let n = sizes.len() as c_int;
                    let order = self.order(*order);
                    if large {
                        shim::mpixm_type_create_subarray_c(
                            n,
                            sizes.as_ptr(),
                            subsizes.as_ptr(),
                            starts.as_ptr(),
                            order,
                            kids[0],
                            o,
                        )
                    } else {
                        ffi::MPI_Type_create_subarray(
                            n,
                            self.buffers.conv.i1(sizes),
                            self.buffers.conv.i2(subsizes),
                            self.buffers.conv.i3(starts),
                            order,
                            kids[0],
                            o,
                        )
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
                    let n = gsizes.len() as c_int;
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
                    let psizes = self.buffers.conv.i3(psizes);
                    let order = self.order(*order);
                    if large {
                        shim::mpixm_type_create_darray_c(
                            *size as c_int,
                            *rank as c_int,
                            n,
                            gsizes.as_ptr(),
                            distribs.as_ptr(),
                            dargs.as_ptr(),
                            psizes,
                            order,
                            kids[0],
                            o,
                        )
                    } else {
                        ffi::MPI_Type_create_darray(
                            *size as c_int,
                            *rank as c_int,
                            n,
                            self.buffers.conv.i1(gsizes),
                            distribs.as_ptr(),
                            dargs.as_ptr(),
                            psizes,
                            order,
                            kids[0],
                            o,
                        )
                    }
                }
                Kind::Resized { lb, extent, .. } => {
                    if large {
                        shim::mpixm_type_create_resized_c(*lb, *extent, kids[0], o)
                    } else {
                        ffi::MPI_Type_create_resized(
                            kids[0],
                            *lb as MPI_Aint,
                            *extent as MPI_Aint,
                            o,
                        )
                    }
                }
                Kind::ValueIndex { .. } => shim::mpixm_type_get_value_index(kids[0], kids[1], o),
            }
        };
        check_constructor(rc, node.combiner(), large)?;
        Ok(out)
    }

    fn order(&self, order: Order) -> c_int {
        match order {
            Order::C => self.local.constants.order_c,
            Order::Fortran => self.local.constants.order_fortran,
        }
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
    ) -> Result<Datatype> {
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
        let mut inner = self.local.datatype_null();
        // SAFETY: arrays of equal length bl.len(); inner is a local.
        let rc = unsafe {
            ffi::MPI_Type_create_struct(
                bl.len() as c_int,
                bl.as_ptr(),
                disp.as_ptr(),
                handles.as_ptr(),
                &mut inner,
            )
        };
        check(rc, "MPI_Type_create_struct")?;
        let inner = Built {
            handle: inner,
            derived: true,
        };
        let geometry = match mpi::geometry(inner.handle) {
            Ok(g) => g,
            Err(e) => {
                inner.release();
                return Err(e);
            }
        };
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
            inner.release();
            return Err(Error::invalid(
                "MPI_COMBINER_STRUCT: the bounds its MPI_LB/MPI_UB members set overflow 64 bits",
            ));
        };
        let mut out = self.local.datatype_null();
        // SAFETY: inner is live; out is a local.
        let rc = unsafe {
            ffi::MPI_Type_create_resized(inner.handle, lb as MPI_Aint, extent as MPI_Aint, &mut out)
        };
        inner.release();
        check(rc, "MPI_Type_create_resized")?;
        Ok(out)
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

/// The error of a constructor call that returned `rc`, if it failed:
/// MPI's code and message, naming the call and the combiner.
pub(crate) fn check_constructor(rc: c_int, c: Combiner, large: bool) -> Result<()> {
    check(rc, constructor_name(c, large)).map_err(|e| match e {
        Error::Mpi {
            call,
            code,
            message,
        } => Error::Mpi {
            call,
            code,
            message: format!("{message} (building {})", c.mpi_name()),
        },
        e => e,
    })
}

fn constructor_name(c: Combiner, large: bool) -> &'static str {
    match (c, large) {
        (Combiner::Dup, _) => "MPI_Type_dup",
        (Combiner::Contiguous, false) => "MPI_Type_contiguous",
        (Combiner::Contiguous, true) => "MPI_Type_contiguous_c",
        (Combiner::Vector, false) => "MPI_Type_vector",
        (Combiner::Vector, true) => "MPI_Type_vector_c",
        (Combiner::Hvector | Combiner::HvectorInteger, false) => "MPI_Type_create_hvector",
        (Combiner::Hvector | Combiner::HvectorInteger, true) => "MPI_Type_create_hvector_c",
        (Combiner::Indexed, false) => "MPI_Type_indexed",
        (Combiner::Indexed, true) => "MPI_Type_indexed_c",
        (Combiner::Hindexed | Combiner::HindexedInteger, false) => "MPI_Type_create_hindexed",
        (Combiner::Hindexed | Combiner::HindexedInteger, true) => "MPI_Type_create_hindexed_c",
        (Combiner::IndexedBlock, false) => "MPI_Type_create_indexed_block",
        (Combiner::IndexedBlock, true) => "MPI_Type_create_indexed_block_c",
        (Combiner::HindexedBlock, false) => "MPI_Type_create_hindexed_block",
        (Combiner::HindexedBlock, true) => "MPI_Type_create_hindexed_block_c",
        (Combiner::Struct | Combiner::StructInteger, false) => "MPI_Type_create_struct",
        (Combiner::Struct | Combiner::StructInteger, true) => "MPI_Type_create_struct_c",
        (Combiner::Subarray, false) => "MPI_Type_create_subarray",
        (Combiner::Subarray, true) => "MPI_Type_create_subarray_c",
        (Combiner::Darray, false) => "MPI_Type_create_darray",
        (Combiner::Darray, true) => "MPI_Type_create_darray_c",
        (Combiner::Resized, false) => "MPI_Type_create_resized",
        (Combiner::Resized, true) => "MPI_Type_create_resized_c",
        (Combiner::ValueIndex, _) => "MPI_Type_get_value_index",
        (Combiner::Named | Combiner::F90Real | Combiner::F90Complex | Combiner::F90Integer, _) => {
            "MPI_Type_create_f90_*"
        }
    }
}
