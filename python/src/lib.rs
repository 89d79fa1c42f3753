//! `mpix_marshal._native`: the library's C API for Python, on mpi4py's
//! handles. Every function takes and returns `mpi4py.MPI.Datatype` (and
//! `MPI.Comm`) objects: a handle crosses as the integer mpi4py gives as
//! `obj.handle` (an `int` in MPICH, a pointer in Open MPI) and comes back
//! through `MPI.Datatype.fromhandle`. The extension links the same
//! `libmpi` mpi4py loads (it is built against the MPI of the environment),
//! so the handles are the same objects on both sides.
//!
//! Errors are the library's return codes: a nonzero code becomes
//! `mpix_marshal.MarshalError(message, code, kind)`, with MPI's message
//! for the code (the library registers its message with the code) and the
//! `MPIX_MARSHAL_ERR_*` kind. The C API raises the error handler of
//! `MPI_COMM_SELF`, which mpi4py sets to `MPI_ERRORS_RETURN` by default
//! (`mpi4py.rc.errors = "exception"`).

use mpix_marshal::testing::capi as c;
use mpix_marshal::testing::mpi::{MPI_Aint, MPI_Count, MPI_Status};
use mpix_marshal::{Comm, Datatype};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyType};
use std::cell::RefCell;
use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_void};

/// `MPIX_MARSHAL_ERR_BUFFER_TOO_SMALL`.
const ERR_BUFFER_TOO_SMALL: c_int = 2;

/// `mpix_marshal.MarshalError`, set by the package's `__init__` (a Python
/// class, so that it is picklable and documented where users look).
static ERROR_CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();
/// `mpi4py.MPI.Datatype.fromhandle`.
static FROMHANDLE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

thread_local! {
    /// The marshal's output buffer: most streams fit, so a marshal is one
    /// C call and one copy into the `bytes` object.
    static SCRATCH: RefCell<Vec<u8>> = RefCell::new(vec![0; 4096]);
}

/// A handle of type `T` (`MPI_Datatype`, `MPI_Comm`: an `int` or a
/// pointer) from mpi4py's integer.
fn from_bits<T: Copy>(bits: u64) -> T {
    // SAFETY: T is a 4- or 8-byte plain handle (integer or pointer), whose
    // every bit pattern of that size is a value of the type.
    unsafe {
        match std::mem::size_of::<T>() {
            4 => std::mem::transmute_copy::<u32, T>(&(bits as u32)),
            8 => std::mem::transmute_copy::<u64, T>(&bits),
            _ => unreachable!("MPI handles are 4 or 8 bytes"),
        }
    }
}

/// mpi4py's integer for a handle of type `T`.
fn to_bits<T: Copy>(h: T) -> u64 {
    // SAFETY: as for from_bits.
    unsafe {
        match std::mem::size_of::<T>() {
            4 => std::mem::transmute_copy::<T, u32>(&h) as u64,
            8 => std::mem::transmute_copy::<T, u64>(&h),
            _ => unreachable!("MPI handles are 4 or 8 bytes"),
        }
    }
}

/// The bits of an mpi4py object's handle (`obj.handle`: a pointer in Open
/// MPI; in MPICH the C int, sign-extended to size_t).
fn handle_of(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    let h = obj.getattr(intern!(obj.py(), "handle"))?;
    match h.extract::<u64>() {
        Ok(b) => Ok(b),
        Err(_) => Ok(h.extract::<i64>()? as u64),
    }
}

/// The handle of an `MPI.Datatype` (or any object with a `handle`).
fn datatype(obj: &Bound<'_, PyAny>) -> PyResult<Datatype> {
    Ok(from_bits(handle_of(obj)?))
}

/// The handle of an `MPI.Comm`.
fn comm(obj: &Bound<'_, PyAny>) -> PyResult<Comm> {
    Ok(from_bits(handle_of(obj)?))
}

/// An `MPI.Datatype` for a handle (`MPI.Datatype.fromhandle`).
fn wrap(py: Python<'_>, t: Datatype) -> PyResult<Py<PyAny>> {
    let f = FROMHANDLE.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        let mpi = py.import("mpi4py.MPI")?;
        Ok(mpi.getattr("Datatype")?.getattr("fromhandle")?.unbind())
    })?;
    let bits = to_bits(t);
    // MPICH's handles are C ints, which mpi4py's `handle` gives as
    // size_t of the sign-extended int (and fromhandle takes the same).
    let bits = if std::mem::size_of::<Datatype>() == 4 {
        bits as u32 as i32 as i64 as u64
    } else {
        bits
    };
    f.call1(py, (bits,))
}

/// `MarshalError(message, code, kind)` for a nonzero return code.
fn error(py: Python<'_>, code: c_int) -> PyErr {
    let message = mpix_marshal::testing::mpi::error_string(code);
    let mut kind: c_int = 0;
    // SAFETY: kind points to a writable int.
    unsafe { c::MPIX_Type_marshal_error_kind(code, &mut kind) };
    match ERROR_CLASS.get(py) {
        Some(cls) => PyErr::from_type(cls.bind(py).clone(), (message, code, kind)),
        None => PyRuntimeError::new_err((message, code, kind)),
    }
}

fn check(py: Python<'_>, code: c_int) -> PyResult<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(error(py, code))
    }
}

/// The C string of a representation name ("external", "internal",
/// "compressed"; anything else is the library's error).
fn rep_name(rep: &str) -> PyResult<CString> {
    CString::new(rep).map_err(|_| PyValueError::new_err("rep contains a NUL byte"))
}

/// The representation's C string, without allocating for the three names.
fn with_rep<R>(rep: &str, f: impl FnOnce(*const c_char) -> PyResult<R>) -> PyResult<R> {
    match rep {
        "external" => f(c"external".as_ptr()),
        "internal" => f(c"internal".as_ptr()),
        "compressed" => f(c"compressed".as_ptr()),
        other => {
            let s = rep_name(other)?;
            f(s.as_ptr())
        }
    }
}

#[pyfunction]
fn _set_error_class(py: Python<'_>, cls: Bound<'_, PyType>) -> PyResult<()> {
    let _ = ERROR_CLASS.set(py, cls.unbind());
    Ok(())
}

/// marshal(dtype, rep="external") -> bytes
///
/// The stream of `dtype` in the representation `rep`.
#[pyfunction]
#[pyo3(signature = (dtype, rep = "external"))]
fn marshal<'py>(
    py: Python<'py>,
    dtype: &Bound<'py, PyAny>,
    rep: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let t = datatype(dtype)?;
    with_rep(rep, |r| {
        SCRATCH.with(|s| {
            let mut buf = s.borrow_mut();
            let mut n: MPI_Aint = 0;
            // SAFETY: r is a C string, buf has buf.len() writable bytes.
            let rc = unsafe {
                c::MPIX_Type_marshal(
                    r,
                    t,
                    buf.as_mut_ptr().cast::<c_void>(),
                    buf.len() as MPI_Aint,
                    &mut n,
                )
            };
            if rc == 0 {
                return Ok(PyBytes::new(py, &buf[..n as usize]));
            }
            let mut kind: c_int = 0;
            // SAFETY: kind points to a writable int.
            unsafe { c::MPIX_Type_marshal_error_kind(rc, &mut kind) };
            if kind != ERR_BUFFER_TOO_SMALL {
                return Err(error(py, rc));
            }
            // A large type: ask its size, then marshal into a buffer of that size.
            let mut size: MPI_Aint = 0;
            // SAFETY: r is a C string, size points to a writable MPI_Aint.
            check(py, unsafe { c::MPIX_Type_marshal_size(r, t, &mut size) })?;
            let mut big = vec![0u8; size as usize];
            // SAFETY: big has size writable bytes.
            check(py, unsafe {
                c::MPIX_Type_marshal(r, t, big.as_mut_ptr().cast::<c_void>(), size, &mut n)
            })?;
            Ok(PyBytes::new(py, &big[..n as usize]))
        })
    })
}

/// marshal_size(dtype, rep="external") -> int
///
/// An upper bound of the bytes `marshal(dtype, rep)` returns.
#[pyfunction]
#[pyo3(signature = (dtype, rep = "external"))]
fn marshal_size(py: Python<'_>, dtype: &Bound<'_, PyAny>, rep: &str) -> PyResult<usize> {
    let t = datatype(dtype)?;
    with_rep(rep, |r| {
        let mut size: MPI_Aint = 0;
        // SAFETY: r is a C string, size points to a writable MPI_Aint.
        check(py, unsafe { c::MPIX_Type_marshal_size(r, t, &mut size) })?;
        Ok(size as usize)
    })
}

/// unmarshal(data, rep="external") -> MPI.Datatype
///
/// Rebuilds the datatype `data` (bytes-like) describes. A predefined type
/// comes back as itself; any other as a new, uncommitted datatype the
/// caller frees (`dtype.Free()`).
#[pyfunction]
#[pyo3(signature = (data, rep = "external"))]
fn unmarshal(py: Python<'_>, data: &Bound<'_, PyAny>, rep: &str) -> PyResult<Py<PyAny>> {
    let mut t: Datatype = from_bits(0);
    if let Ok(b) = data.cast::<PyBytes>() {
        let bytes = b.as_bytes();
        with_rep(rep, |r| {
            // SAFETY: r is a C string, bytes is readable, t writable.
            check(py, unsafe {
                c::MPIX_Type_unmarshal(
                    r,
                    bytes.as_ptr().cast::<c_void>(),
                    bytes.len() as MPI_Aint,
                    &mut t,
                )
            })
        })?;
    } else {
        // Any other bytes-like object (bytearray, memoryview, NumPy array).
        let buf = pyo3::buffer::PyBuffer::<u8>::get(data)?;
        let bytes = buf.to_vec(py)?;
        with_rep(rep, |r| {
            // SAFETY: as above.
            check(py, unsafe {
                c::MPIX_Type_unmarshal(
                    r,
                    bytes.as_ptr().cast::<c_void>(),
                    bytes.len() as MPI_Aint,
                    &mut t,
                )
            })
        })?;
    }
    wrap(py, t)
}

/// marshaled_signature_hash(data, rep="external") -> int
///
/// The default signature hash of the type a stream describes, without
/// rebuilding it.
#[pyfunction]
#[pyo3(signature = (data, rep = "external"))]
fn marshaled_signature_hash(py: Python<'_>, data: &[u8], rep: &str) -> PyResult<u64> {
    let mut h: u64 = 0;
    with_rep(rep, |r| {
        // SAFETY: r is a C string, data is readable, h writable.
        check(py, unsafe {
            c::MPIX_Type_marshaled_signature_hash(
                r,
                data.as_ptr().cast::<c_void>(),
                data.len() as MPI_Aint,
                &mut h,
            )
        })
    })?;
    Ok(h)
}

/// compare(a, b, level=IDENTICAL) -> (result, explanation)
///
/// `result` is 0 when `a` and `b` are equal at `level` (a `COMPARE_*`
/// constant) and every weaker level, else the weakest level at which they
/// differ; `explanation` describes the first difference ("" when equal).
#[pyfunction]
#[pyo3(signature = (a, b, level = 5))]
fn compare(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    level: c_int,
) -> PyResult<(c_int, String)> {
    let (ta, tb) = (datatype(a)?, datatype(b)?);
    let mut result: c_int = 0;
    let mut text = [0u8; 1024];
    // SAFETY: result is writable, text has text.len() writable bytes.
    check(py, unsafe {
        c::MPIX_Type_compare(
            ta,
            tb,
            level,
            &mut result,
            text.as_mut_ptr().cast::<c_char>(),
            text.len() as c_int,
        )
    })?;
    let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
    Ok((result, String::from_utf8_lossy(&text[..end]).into_owned()))
}

/// signature_count(dtype) -> int
#[pyfunction]
fn signature_count(py: Python<'_>, dtype: &Bound<'_, PyAny>) -> PyResult<i64> {
    let t = datatype(dtype)?;
    let mut n: MPI_Count = 0;
    // SAFETY: n points to a writable MPI_Count.
    check(py, unsafe { c::MPIX_Type_signature_count(t, &mut n) })?;
    Ok(n as i64)
}

/// signature_hash(dtype, count=1, kind=HASH_DEFAULT) -> int
///
/// The hash of the type signature of `count` consecutive `dtype`s in the
/// family `kind` (a `HASH_*` constant).
#[pyfunction]
#[pyo3(signature = (dtype, count = 1, kind = 7))]
fn signature_hash(
    py: Python<'_>,
    dtype: &Bound<'_, PyAny>,
    count: i64,
    kind: c_int,
) -> PyResult<u64> {
    let t = datatype(dtype)?;
    let mut h: u64 = 0;
    if count == 1 {
        // SAFETY: h points to a writable u64.
        check(py, unsafe { c::MPIX_Type_signature_hash(t, kind, &mut h) })?;
    } else {
        let mut n: MPI_Count = 0;
        // SAFETY: n points to a writable MPI_Count.
        check(py, unsafe { c::MPIX_Type_signature_count(t, &mut n) })?;
        let total = (n as i64)
            .checked_mul(count)
            .ok_or_else(|| PyValueError::new_err("count × the signature's length overflows"))?;
        // SAFETY: h points to a writable u64.
        check(py, unsafe {
            c::MPIX_Type_signature_prefix_hash(
                t,
                count as MPI_Count,
                total as MPI_Count,
                kind,
                &mut h,
            )
        })?;
    }
    Ok(h)
}

/// signature_prefix_hash(dtype, count, n, kind=HASH_DEFAULT) -> int
///
/// The hash of the first `n` basic elements of `count` consecutive `dtype`s.
#[pyfunction]
#[pyo3(signature = (dtype, count, n, kind = 7))]
fn signature_prefix_hash(
    py: Python<'_>,
    dtype: &Bound<'_, PyAny>,
    count: i64,
    n: i64,
    kind: c_int,
) -> PyResult<u64> {
    let t = datatype(dtype)?;
    let mut h: u64 = 0;
    // SAFETY: h points to a writable u64.
    check(py, unsafe {
        c::MPIX_Type_signature_prefix_hash(t, count as MPI_Count, n as MPI_Count, kind, &mut h)
    })?;
    Ok(h)
}

/// error_kind(code) -> int: the `ERR_*` kind of an error code.
#[pyfunction]
fn error_kind(code: c_int) -> c_int {
    let mut kind: c_int = 0;
    // SAFETY: kind points to a writable int.
    unsafe { c::MPIX_Type_marshal_error_kind(code, &mut kind) };
    kind
}

/// send_type(comm, dtype, dest, tag=0)
///
/// Sends `dtype` to `dest` of `comm` through the type exchange: its
/// description the first time, a 16-byte reference afterwards.
#[pyfunction]
#[pyo3(signature = (comm, dtype, dest, tag = 0))]
fn send_type(
    py: Python<'_>,
    comm: &Bound<'_, PyAny>,
    dtype: &Bound<'_, PyAny>,
    dest: c_int,
    tag: c_int,
) -> PyResult<()> {
    let (c_, t) = (self::comm(comm)?, datatype(dtype)?);
    let (cb, tb) = (to_bits(c_), to_bits(t));
    // The GIL is let go while MPI blocks (another thread may run Python).
    let rc = py.detach(move || c::MPIX_Type_send(from_bits(tb), dest, tag, from_bits(cb)));
    check(py, rc)
}

/// recv_type(comm, source=ANY_SOURCE, tag=ANY_TAG, status=None) -> MPI.Datatype
///
/// Receives a datatype sent with `send_type`: a new datatype the caller
/// frees (a predefined type comes back as itself). `status`, an
/// `MPI.Status`, gets the source and tag.
#[pyfunction]
#[pyo3(signature = (comm, source = None, tag = None, status = None))]
fn recv_type(
    py: Python<'_>,
    comm: &Bound<'_, PyAny>,
    source: Option<c_int>,
    tag: Option<c_int>,
    status: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    use mpix_marshal::testing::mpi::comm::{any_source, any_tag};
    let source = source.unwrap_or_else(any_source);
    let tag = tag.unwrap_or_else(any_tag);
    let cb = to_bits(self::comm(comm)?);
    // mpi4py's MPI._addressof(status) is the address of its MPI_Status.
    let sp: u64 = match status {
        Some(s) => py
            .import("mpi4py.MPI")?
            .getattr("_addressof")?
            .call1((s,))?
            .extract()?,
        None => 0,
    };
    let (rc, tb) = py.detach(move || {
        let mut t: Datatype = from_bits(0);
        let rc = unsafe {
            // SAFETY: t is writable; sp is NULL (MPI_STATUS_IGNORE to the
            // library) or the address of mpi4py's MPI_Status.
            c::MPIX_Type_recv(
                &mut t,
                source,
                tag,
                from_bits(cb),
                sp as usize as *mut MPI_Status,
            )
        };
        (rc, to_bits(t))
    });
    check(py, rc)?;
    wrap(py, from_bits(tb))
}

/// bcast_type(comm, dtype, root=0) -> MPI.Datatype
///
/// The root's `dtype` on every process of `comm`: the root gets its own
/// back, every other process a new datatype it frees (`dtype` is ignored
/// there and may be None or `MPI.DATATYPE_NULL`).
#[pyfunction]
#[pyo3(signature = (comm, dtype = None, root = 0))]
fn bcast_type(
    py: Python<'_>,
    comm: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    root: c_int,
) -> PyResult<Py<PyAny>> {
    let cb = to_bits(self::comm(comm)?);
    let tb = match dtype {
        Some(d) if !d.is_none() => to_bits(datatype(d)?),
        _ => {
            let null = py.import("mpi4py.MPI")?.getattr("DATATYPE_NULL")?;
            to_bits(datatype(&null)?)
        }
    };
    let given = tb;
    let (rc, tb) = py.detach(move || {
        let mut t: Datatype = from_bits(tb);
        // SAFETY: t is writable.
        let rc = unsafe { c::MPIX_Type_bcast(&mut t, root, from_bits(cb)) };
        (rc, to_bits(t))
    });
    check(py, rc)?;
    if tb == given {
        if let Some(d) = dtype {
            if !d.is_none() {
                return Ok(d.clone().unbind());
            }
        }
    }
    wrap(py, from_bits(tb))
}

/// exchange_setup(comm): sets the type exchange up on `comm` now (collective).
#[pyfunction]
fn exchange_setup(py: Python<'_>, comm: &Bound<'_, PyAny>) -> PyResult<()> {
    let cb = to_bits(self::comm(comm)?);
    let rc = py.detach(move || c::MPIX_Type_exchange_setup(from_bits(cb)));
    check(py, rc)
}

/// version() -> (major, minor, patch) of the library.
#[pyfunction]
fn version(py: Python<'_>) -> PyResult<(c_int, c_int, c_int)> {
    let (mut a, mut b, mut d) = (0, 0, 0);
    // SAFETY: the three point to writable ints.
    check(py, unsafe {
        c::MPIX_Marshal_get_version(&mut a, &mut b, &mut d)
    })?;
    Ok((a, b, d))
}

/// _noop(dtype): reads the handle and returns (the binding's own cost).
#[pyfunction]
fn _noop(dtype: &Bound<'_, PyAny>) -> PyResult<()> {
    datatype(dtype).map(|_| ())
}

/// _c_marshal_loop(dtype, rep, n) -> seconds: `n` marshals through the C
/// API with no Python in between (the bench's reference).
#[pyfunction]
fn _c_marshal_loop(py: Python<'_>, dtype: &Bound<'_, PyAny>, rep: &str, n: usize) -> PyResult<f64> {
    let t = datatype(dtype)?;
    let r = rep_name(rep)?;
    let mut buf = vec![0u8; 1 << 16];
    let start = std::time::Instant::now();
    for _ in 0..n {
        let mut w: MPI_Aint = 0;
        // SAFETY: r is a C string, buf has buf.len() writable bytes.
        check(py, unsafe {
            c::MPIX_Type_marshal(
                r.as_ptr(),
                t,
                buf.as_mut_ptr().cast::<c_void>(),
                buf.len() as MPI_Aint,
                &mut w,
            )
        })?;
        std::hint::black_box(w);
    }
    Ok(start.elapsed().as_secs_f64())
}

/// _c_unmarshal_loop(data, rep, n) -> seconds: `n` unmarshals (and frees)
/// through the C API with no Python in between.
#[pyfunction]
fn _c_unmarshal_loop(py: Python<'_>, data: &[u8], rep: &str, n: usize) -> PyResult<f64> {
    let r = rep_name(rep)?;
    let start = std::time::Instant::now();
    for _ in 0..n {
        let mut t: Datatype = from_bits(0);
        // SAFETY: r is a C string, data is readable, t writable.
        check(py, unsafe {
            c::MPIX_Type_unmarshal(
                r.as_ptr(),
                data.as_ptr().cast::<c_void>(),
                data.len() as MPI_Aint,
                &mut t,
            )
        })?;
        if mpix_marshal::testing::mpi::is_derived(t) {
            let _ = mpix_marshal::testing::mpi::free(t);
        }
    }
    Ok(start.elapsed().as_secs_f64())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_set_error_class, m)?)?;
    m.add_function(wrap_pyfunction!(marshal, m)?)?;
    m.add_function(wrap_pyfunction!(marshal_size, m)?)?;
    m.add_function(wrap_pyfunction!(unmarshal, m)?)?;
    m.add_function(wrap_pyfunction!(marshaled_signature_hash, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(signature_count, m)?)?;
    m.add_function(wrap_pyfunction!(signature_hash, m)?)?;
    m.add_function(wrap_pyfunction!(signature_prefix_hash, m)?)?;
    m.add_function(wrap_pyfunction!(error_kind, m)?)?;
    m.add_function(wrap_pyfunction!(send_type, m)?)?;
    m.add_function(wrap_pyfunction!(recv_type, m)?)?;
    m.add_function(wrap_pyfunction!(bcast_type, m)?)?;
    m.add_function(wrap_pyfunction!(exchange_setup, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(_noop, m)?)?;
    m.add_function(wrap_pyfunction!(_c_marshal_loop, m)?)?;
    m.add_function(wrap_pyfunction!(_c_unmarshal_loop, m)?)?;
    // The MPI the extension was built for ("mpich", "openmpi", ...).
    m.add("_built_for", mpix_marshal::mpi_built_for())?;
    Ok(())
}
