//! The direct unmarshal: a stream's nodes into MPI constructor calls with
//! no tree in between.
//!
//! Unmarshalling sits on communication paths (an RMA target rebuilding the
//! origin's type), where the tree path's allocations and its separate
//! validation and signature walks cost more than the constructor calls
//! themselves. This path is a visitor of the one reader (`format::reader`),
//! which checks every format rule, and compiles the stream in that one
//! pass into a flat program: each
//! node's fields go straight into its constructor's argument arrays, laid
//! out as `MPI_Type_get_contents` returns them, one step per node in
//! post-order, and its signature value follows from its children's by the
//! rules of `signature::fold`. Only when the whole stream has been read and
//! checked, its signature hash included, does it run the program: each
//! step calls its constructor on the handles the steps before it built. As
//! on the tree path, nothing is built until every check has passed.
//!
//! It covers the common streams: nodes without the WIDE, LARGE, ATTRS or
//! CORRECTION flags, of the combiners DUP, CONTIGUOUS, VECTOR, HVECTOR,
//! INDEXED, HINDEXED, INDEXED_BLOCK, HINDEXED_BLOCK, STRUCT and RESIZED,
//! over predefined types this MPI defines. For anything else, and for any
//! stream it finds wrong, it answers None and the caller takes the tree
//! path (`read` + `build`), which builds the rest and words every error.
//! A level whose recorded bounds (BOUNDS) the local MPI does not
//! reproduce, with shared and then with distinct struct members as on the
//! tree path, is also left to the tree path, which restores them with a
//! correction: what was built is freed and the answer is None.
//! So this path must never be laxer than the tree path: it accepts a
//! stream only when `read` accepts it and `build` would make the same
//! calls. `tests/direct.rs` and the fuzz targets check that.

use crate::error::Error;
use crate::format::codes::{Combiner, Predefined};
use crate::format::external::Encoding;
use crate::format::reader::{self, Fields, Head, Stop, Visitor};
use crate::marshal;
use crate::mpi::construct::Call;
use crate::mpi::{self, Datatype, Handles, Local, MPI_Aint, OwnedDatatype};
use crate::scratch::with_buffer;
use crate::signature::{Default64, SignatureMonoid};
use std::os::raw::c_int;

/// Builds the type whose nodes run from `start` to the end of `bytes`, in
/// `enc`; with `hash`, only if that is the type's default signature hash.
/// None: the stream is not covered or not valid, and nothing was built.
/// An error: an MPI call failed while building (what was built is freed).
pub(crate) fn unmarshal(
    bytes: &[u8],
    start: usize,
    enc: Encoding,
    hash: Option<u64>,
) -> Option<Result<Datatype, Box<Error>>> {
    let local = mpi::local();
    with_buffer(&PROGRAM, |program| {
        // A struct of equal members is built on one shared handle first,
        // as `build` builds it; if the MPI then pads it otherwise than
        // recorded, on one handle per member, as `build` then does.
        let mut built = None;
        for share in [true, false] {
            program.clear();
            let compiled = Compiler {
                stream: bytes,
                enc,
                local,
                hashing: hash.is_some(),
                share,
                p: &mut *program,
            }
            .stream(start, hash);
            if compiled.is_none() {
                break;
            }
            let shared = program.steps.iter().any(|s| s.shared);
            built = program.run(bytes).transpose();
            if built.is_some() || !shared {
                break;
            }
        }
        program.trim();
        built
    })
}

thread_local! {
    static PROGRAM: std::cell::RefCell<Program> = std::cell::RefCell::new(Program::default());
}

/// A compiled stream: its steps and their arguments, reused across calls.
#[derive(Default)]
struct Program {
    /// One per node, children before their parent.
    steps: Vec<Step>,
    /// The steps' int and address arguments, each step's contiguous.
    ints: Vec<c_int>,
    addrs: Vec<MPI_Aint>,
    /// While compiling: the signature values of the subtrees read and not
    /// yet taken by their parent.
    sigs: Vec<Default64>,
    /// While compiling: the steps whose children are being read.
    pending: Vec<Step>,
    /// While running: the handles made and not yet taken by their parent
    /// (owned when built, borrowed when predefined).
    handles: Handles,
}

/// One constructor call, or a predefined handle.
struct Step {
    combiner: Combiner,
    /// The predefined handle (NAMED).
    handle: Datatype,
    children: u32,
    /// How many times the old type's signature repeats in this one's (all
    /// but STRUCT; `signature::fold`'s k).
    repeats: u64,
    /// Its recorded bounds are the last two of its `addrs`.
    bounded: bool,
    /// A struct whose members are all one subtree, built once: its one
    /// child's handle stands for every member.
    shared: bool,
    /// Its arguments in `Program::ints` and `Program::addrs`.
    ints: Span,
    addrs: Span,
    /// Its name in the stream (empty: none).
    name: Span,
}

/// Where a step's items are: 32-bit, to keep steps small (`stream`
/// leaves inputs of 4 GiB or more to the tree path).
#[derive(Clone, Copy, Default)]
struct Span {
    at: u32,
    len: u32,
}

impl Span {
    fn new(at: usize, end: usize) -> Span {
        Span {
            at: at as u32,
            len: (end - at) as u32,
        }
    }

    fn range(self) -> std::ops::Range<usize> {
        self.at as usize..(self.at + self.len) as usize
    }
}

impl Program {
    fn clear(&mut self) {
        self.steps.clear();
        self.ints.clear();
        self.addrs.clear();
        self.sigs.clear();
        self.pending.clear();
    }

    /// Drops buffers a large stream grew, so a thread does not keep them.
    fn trim(&mut self) {
        const KEEP: usize = 1 << 16;
        if self.ints.capacity() > KEEP || self.addrs.capacity() > KEEP {
            *self = Program::default();
        } else if self.steps.capacity() > KEEP / 8 {
            self.steps = Vec::new();
        }
    }

    /// Runs the steps; the root's handle, or None (and nothing kept) when
    /// a level does not have its recorded bounds. On error, every handle
    /// built is freed. (Errors are boxed: a small result keeps the hot
    /// path's returns in registers.)
    fn run(&mut self, bytes: &[u8]) -> Result<Option<Datatype>, Box<Error>> {
        let root = run_steps(
            &self.steps,
            &self.ints,
            &self.addrs,
            bytes,
            &mut self.handles,
        );
        // What is left (after an error or a refusal) is freed here.
        self.handles.clear();
        root
    }
}

/// `Program::run`'s loop: the steps' constructor calls, each on the
/// handles its children left on `handles`.
fn run_steps(
    steps: &[Step],
    ints: &[c_int],
    addrs: &[MPI_Aint],
    bytes: &[u8],
    handles: &mut Handles,
) -> Result<Option<Datatype>, Box<Error>> {
    for s in steps {
        if s.combiner == Combiner::Named {
            handles.push(OwnedDatatype::borrowed(s.handle));
            continue;
        }
        let first = handles.len() - s.children as usize;
        let (ints, addrs) = (&ints[s.ints.range()], &addrs[s.addrs.range()]);
        let made = if s.shared {
            let members = vec![handles.raw()[first]; ints[0] as usize];
            construct(s.combiner, ints, addrs, &members)
        } else {
            construct(s.combiner, ints, addrs, &handles.raw()[first..])
        };
        // The children go (the new type keeps what it needs of them).
        handles.truncate(first);
        let t = made?;
        if s.bounded {
            let want = &addrs[addrs.len() - 2..];
            let (lb, extent) = mpi::extent(t.get())?;
            if [lb as MPI_Aint, extent as MPI_Aint] != want {
                return Ok(None);
            }
        }
        if s.name.len > 0 {
            mpi::set_name(t.get(), &bytes[s.name.range()])?;
        }
        handles.push(t);
    }
    let root = handles.pop().expect("the root's step ran last");
    Ok(Some(root.into_raw()))
}

/// The reader's visitor that compiles a stream into a `Program`.
struct Compiler<'a> {
    /// The whole stream (names are kept as spans of it).
    stream: &'a [u8],
    enc: Encoding,
    local: &'static Local,
    /// Whether signature values are computed (external streams).
    hashing: bool,
    /// Whether a struct of equal derived members is built on one handle.
    share: bool,
    p: &'a mut Program,
}

impl<'a> Compiler<'a> {
    /// The whole stream from `start`: nodes the reader accepts and this
    /// path covers, and (with `hash`) that signature hash. None: leave the
    /// stream to the tree path, which words any error.
    fn stream(mut self, start: usize, hash: Option<u64>) -> Option<()> {
        u32::try_from(self.stream.len()).ok()?;
        let (stream, enc) = (self.stream, self.enc);
        reader::read(stream, start, enc, &mut self).ok()?;
        match hash {
            Some(h) if self.p.sigs.last()?.h != h => None,
            _ => Some(()),
        }
    }

    /// Replaces the children's signature values with the node's, by the
    /// rules of `signature::fold` (the marshal side's too: a stream whose
    /// hash differs is left to the tree path, so tests/direct.rs sees it).
    fn hash(&mut self, step: &Step, members: u32) {
        let p = &mut *self.p;
        let first = p.sigs.len() - members as usize;
        let value = if step.combiner == Combiner::Struct {
            let blocklengths = &p.ints[step.ints.range()][1..];
            struct_value(blocklengths, &p.sigs[first..])
        } else {
            p.sigs[first].repeat(u128::from(step.repeats))
        };
        p.sigs.truncate(first);
        p.sigs.push(value);
    }

    /// A derived node as a step waiting for its children, or None when
    /// this path does not build it.
    fn step(&mut self, head: &Head<'a>, fields: Fields<'a>) -> Option<()> {
        // WIDE, LARGE, ATTRS and CORRECTION are the tree path's.
        if head.wide || head.large || !head.attrs.is_empty() || head.correction {
            return None;
        }
        let name = match head.name {
            Some(name) if name.len() > self.local.max_name_len() => return None,
            Some(name) => {
                let at = name.as_ptr() as usize - self.stream.as_ptr() as usize;
                Span::new(at, at + name.len())
            }
            None => Span::default(),
        };
        let combiner = head.combiner;
        let (ints, addrs) = (self.p.ints.len(), self.p.addrs.len());
        let repeats = self.fields(combiner, &fields)?;
        if head.bounds {
            // The recorded lb and extent are the last two fields.
            let n = fields.len();
            let (lb, extent) = (fields.get(n - 2), fields.get(n - 1));
            self.p.addrs.extend([lb as MPI_Aint, extent as MPI_Aint]);
        }
        let step = Step {
            combiner,
            handle: self.local.datatype_null(),
            children: fields.children as u32,
            repeats,
            bounded: head.bounds,
            shared: false,
            ints: Span::new(ints, self.p.ints.len()),
            addrs: Span::new(addrs, self.p.addrs.len()),
            name,
        };
        self.p.pending.push(step);
        Some(())
    }

    /// Puts a node's fields into the program's arrays as its constructor
    /// takes them (get_contents' layout); returns how many times its old
    /// type's signature repeats. The reader checked the fields' lengths;
    /// the checks here are `tree::validate`'s for narrow, classic nodes:
    /// counts and blocklengths are not negative (every narrow field fits a
    /// C int).
    fn fields(&mut self, combiner: Combiner, f: &Fields<'a>) -> Option<u64> {
        let enc = f.enc;
        let int = |i: usize| f.get(i) as c_int;
        let count = |i: usize| Some(int(i)).filter(|&v| v >= 0);
        // Fields `from..from + n` as they stand in the stream.
        let words = |from: usize, n: usize| &f.bytes[from * 4..(from + n) * 4];
        let addr = |v: c_int| v as MPI_Aint;
        let product = |a: c_int, b: c_int| a as u64 * b as u64;
        let p = &mut *self.p;
        Some(match combiner {
            Combiner::Dup => 1,
            Combiner::Contiguous => {
                let n = count(0)?;
                p.ints.push(n);
                n as u64
            }
            Combiner::Vector => {
                let v = [count(0)?, count(1)?, int(2)];
                p.ints.extend(v);
                product(v[0], v[1])
            }
            Combiner::Hvector => {
                let v = [count(0)?, count(1)?];
                p.ints.extend(v);
                p.addrs.push(addr(int(2)));
                product(v[0], v[1])
            }
            Combiner::Indexed => {
                let n = count(0)?;
                let k = n as usize;
                p.ints.push(n);
                let sum = counts(enc, words(1, k), &mut p.ints)?;
                convert(enc, words(1 + k, k), &mut p.ints, |v| v);
                sum
            }
            Combiner::Hindexed | Combiner::Struct => {
                let n = count(0)?;
                let k = n as usize;
                p.ints.push(n);
                let sum = counts(enc, words(1, k), &mut p.ints)?;
                convert(enc, words(1 + k, k), &mut p.addrs, addr);
                sum
            }
            Combiner::IndexedBlock | Combiner::HindexedBlock => {
                let v = [count(0)?, count(1)?];
                let displacements = words(2, v[0] as usize);
                p.ints.extend(v);
                if combiner == Combiner::IndexedBlock {
                    convert(enc, displacements, &mut p.ints, |v| v);
                } else {
                    convert(enc, displacements, &mut p.addrs, addr);
                }
                product(v[0], v[1])
            }
            Combiner::Resized => {
                p.addrs.extend([addr(int(0)), addr(int(1))]);
                1
            }
            _ => return None,
        })
    }
}

impl<'a> Visitor<'a> for Compiler<'a> {
    fn named(&mut self, p: Predefined) -> Result<(), Stop> {
        let handle = self.local.datatype(p).ok_or(Stop::DECLINED)?;
        if self.hashing {
            let sig = marshal::named_signature(p).map_err(|_| Stop::DECLINED)?;
            self.p.sigs.push(sig);
        }
        self.p.steps.push(Step {
            combiner: Combiner::Named,
            handle,
            children: 0,
            repeats: 1,
            bounded: false,
            shared: false,
            ints: Span::default(),
            addrs: Span::default(),
            name: Span::default(),
        });
        Ok(())
    }

    fn derived(&mut self, head: &Head<'a>, fields: Fields<'a>) -> Result<(), Stop> {
        self.step(head, fields).ok_or(Stop::DECLINED)
    }

    fn end(&mut self) -> Result<(), Stop> {
        let step = self.p.pending.pop().expect("derived came first");
        if self.hashing {
            // A shared struct's members were all valued (`repeated`).
            let members = if step.shared {
                self.p.ints[step.ints.range()][0] as u32
            } else {
                step.children
            };
            self.hash(&step, members);
        }
        self.p.steps.push(step);
        Ok(())
    }

    fn skips_repeated_members(&self) -> bool {
        self.share
    }

    fn repeated(&mut self, more: usize) {
        let p = &mut *self.p;
        let step = p.pending.last_mut().expect("a struct is pending");
        step.shared = true;
        step.children = 1;
        if self.hashing {
            let value = *p.sigs.last().expect("the member's value");
            p.sigs.extend(std::iter::repeat(value).take(more));
        }
    }
}

/// A struct's signature value: each member's repeated by its blocklength,
/// concatenated in order. Concatenation is associative, so the members are
/// folded in four runs at once and the runs joined: four independent
/// chains of multiplications rather than one (a struct of 1,000 members
/// spent most of its compile time waiting on the one).
fn struct_value(blocklengths: &[c_int], members: &[Default64]) -> Default64 {
    const RUNS: usize = 4;
    let n = blocklengths.len().min(members.len());
    let run = n.div_ceil(RUNS);
    let mut acc = [Default64::empty(); RUNS];
    for i in 0..run {
        for (r, acc) in acc.iter_mut().enumerate() {
            let k = r * run + i;
            if k < n {
                *acc = match blocklengths[k] {
                    0 => *acc,
                    1 => acc.concat(&members[k]),
                    b => acc.concat(&members[k].repeat(b as u128)),
                };
            }
        }
    }
    acc.iter()
        .fold(Default64::empty(), |all, run| all.concat(run))
}

/// Appends the int fields in `words` to `out`, each converted by `to`;
/// returns the lowest and the sum of all.
#[inline(always)]
fn convert<T>(
    enc: Encoding,
    words: &[u8],
    out: &mut Vec<T>,
    to: impl Fn(c_int) -> T,
) -> (c_int, i64) {
    let n = words.len() / 4;
    out.reserve(n);
    let room = &mut out.spare_capacity_mut()[..n];
    let found = match enc {
        Encoding::Xdr => fill::<T, true>(room, words, to),
        Encoding::Native => fill::<T, false>(room, words, to),
    };
    let len = out.len();
    // SAFETY: `fill` initialised the first n elements of the spare
    // capacity (room has n elements and words n chunks of 4).
    unsafe { out.set_len(len + n) };
    found
}

/// The conversion loop, with the byte order fixed and no capacity check,
/// so that it vectorises: the arrays of large indexed types have hundreds
/// of thousands of fields. (A loop of pushes did not vectorise, and
/// `extend`, not inlined, divided by the chunk size, a run-time 4 there.)
#[inline(always)]
fn fill<T, const BIG_ENDIAN: bool>(
    room: &mut [std::mem::MaybeUninit<T>],
    words: &[u8],
    to: impl Fn(c_int) -> T,
) -> (c_int, i64) {
    let (mut lowest, mut sum) = (0, 0i64);
    for (dst, w) in room.iter_mut().zip(words.chunks_exact(4)) {
        let w: [u8; 4] = w.try_into().expect("chunks of 4");
        let v = if BIG_ENDIAN {
            c_int::from_be_bytes(w)
        } else {
            c_int::from_ne_bytes(w)
        };
        lowest = lowest.min(v);
        sum += i64::from(v);
        dst.write(to(v));
    }
    (lowest, sum)
}

/// Appends the count fields in `words` to `out`; their sum, or None if
/// one is negative.
fn counts(enc: Encoding, words: &[u8], out: &mut Vec<c_int>) -> Option<u64> {
    let (lowest, sum) = convert(enc, words, out, |v| v);
    (lowest >= 0).then_some(sum as u64)
}

/// Calls `combiner`'s classic constructor with the arguments `ints` and
/// `addrs`, laid out as get_contents returns them, on `kids` (the inverse
/// of `mpi::contents`).
fn construct(
    combiner: Combiner,
    ints: &[c_int],
    addrs: &[MPI_Aint],
    kids: &[Datatype],
) -> Result<OwnedDatatype, Box<Error>> {
    let (i, d, t) = (ints, addrs, kids);
    // `Compiler::fields` laid out i[0] entries per array after the counts.
    let n = |i: &[c_int]| i[0] as usize;
    let call = match combiner {
        Combiner::Dup => Call::Dup(t[0]),
        Combiner::Contiguous => Call::Contiguous(i[0], t[0]),
        Combiner::Vector => Call::Vector([i[0], i[1], i[2]], t[0]),
        Combiner::Hvector => Call::Hvector([i[0], i[1]], d[0], t[0]),
        Combiner::Indexed => Call::Indexed(&i[1..1 + n(i)], &i[1 + n(i)..1 + 2 * n(i)], t[0]),
        Combiner::Hindexed => Call::Hindexed(&i[1..1 + n(i)], &d[..n(i)], t[0]),
        Combiner::IndexedBlock => Call::IndexedBlock(i[1], &i[2..2 + n(i)], t[0]),
        Combiner::HindexedBlock => Call::HindexedBlock(i[1], &d[..n(i)], t[0]),
        Combiner::Struct => Call::Struct(&i[1..1 + n(i)], &d[..n(i)], &t[..n(i)]),
        Combiner::Resized => Call::Resized(t[0], d[0], d[1]),
        _ => unreachable!("compiled only for the combiners above"),
    };
    mpi::construct::construct(call, combiner).map_err(Box::new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::tree::Node;
    use crate::signature::fold;

    /// The four-run fold equals the member-by-member one, for every length
    /// around the run boundaries and with empty members.
    #[test]
    fn struct_value_is_the_ordered_concatenation() {
        let basic = |code| fold::<Default64>(&Node::named(Predefined(code))).unwrap();
        let codes = [0x240, 0x241, 0x243, 0x244, 0x245];
        let members: Vec<Default64> = (0..23).map(|i| basic(codes[i % 5])).collect();
        for n in 0..members.len() {
            let blocklengths: Vec<c_int> = (0..n).map(|i| (i * 7 % 4) as c_int).collect();
            let mut expected = Default64::empty();
            for (&b, m) in blocklengths.iter().zip(&members) {
                expected = expected.concat(&m.repeat(b as u128));
            }
            assert_eq!(
                struct_value(&blocklengths, &members[..n]),
                expected,
                "n={n}"
            );
        }
    }
}
