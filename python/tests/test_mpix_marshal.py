"""Tests of the mpix_marshal package, run on every rank under
``mpiexec -n 2 python -m pytest python/tests`` (scripts/python-tests.sh).
Every rank runs every test in the same order, so the exchange tests' sends
and receives pair up; the single-process tests run on both ranks."""

import pickle

import pytest
from mpi4py import MPI

import mpix_marshal as mm

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
size = comm.Get_size()

PREDEFINED = [MPI.INT, MPI.DOUBLE, MPI.CHAR, MPI.BYTE, MPI.FLOAT_INT, MPI.DOUBLE_COMPLEX,
              MPI.INT64_T, MPI.PACKED]


def hdf5ish():
    """The bench's HDF5-like compound: a struct of an int, a double[3]
    vector, a named char[16] and a resized hvector of floats."""
    vec = MPI.DOUBLE.Create_contiguous(3)
    name = MPI.CHAR.Create_contiguous(16)
    name.Set_name("name_t")
    hv = MPI.FLOAT.Create_hvector(2, 1, 8)
    fl = hv.Create_resized(0, 16)
    s = MPI.Datatype.Create_struct([1, 1, 1, 1], [0, 8, 32, 48], [MPI.INT, vec, name, fl])
    t = s.Create_resized(0, 64)
    t.Set_name("record_t")
    for x in (vec, name, hv, fl, s):
        x.Free()
    return t


def derived():
    """(label, committed type) pairs: a vector, a struct with a resized
    member, a subarray."""
    out = []
    out.append(("vector", MPI.DOUBLE.Create_vector(3, 2, 4)))
    out.append(("struct+resized", hdf5ish()))
    out.append(("subarray", MPI.INT.Create_subarray([6, 5], [3, 2], [1, 2], order=MPI.ORDER_C)))
    for _, t in out:
        t.Commit()
    return out


def pack(t):
    """The bytes MPI_Pack writes for one `t` over a patterned buffer."""
    lb, extent = t.Get_extent()
    assert lb == 0
    _tlb, text = t.Get_true_extent()
    src = bytearray((i * 7 + 3) % 251 for i in range(max(extent, text)))
    out = bytearray(t.Pack_size(1, comm))
    n = t.Pack(src, out, 0, comm)
    return bytes(out[:n])


@pytest.mark.parametrize("t", PREDEFINED, ids=lambda t: t.Get_name())
@pytest.mark.parametrize("rep", ["external", "internal", "compressed"])
def test_predefined_round_trip(t, rep):
    data = mm.marshal(t, rep)
    assert isinstance(data, bytes)
    assert len(data) <= mm.marshal_size(t, rep)
    u = mm.unmarshal(data, rep)
    assert u == t  # the very same handle
    assert u.is_predefined
    assert mm.compare(t, u, mm.IDENTICAL) == (0, "")


@pytest.mark.parametrize("rep", ["external", "internal", "compressed"])
def test_derived_round_trip(rep):
    for label, t in derived():
        data = mm.marshal(t, rep)
        assert len(data) <= mm.marshal_size(t, rep), label
        u = mm.unmarshal(data, rep)
        assert not u.is_predefined
        assert u != t
        assert mm.compare(t, u, mm.IDENTICAL) == (0, ""), label
        assert u.Get_name() == t.Get_name(), label
        u.Commit()
        assert u.Get_size() == t.Get_size(), label
        assert u.Get_extent() == t.Get_extent(), label
        assert u.Get_true_extent() == t.Get_true_extent(), label
        assert u.Get_envelope() == t.Get_envelope(), label
        assert pack(u) == pack(t), label
        assert mm.signature_hash(u) == mm.signature_hash(t), label
        assert mm.marshaled_signature_hash(data, rep) == mm.signature_hash(t), label
        u.Free()
        t.Free()


def test_unmarshal_takes_bytes_like():
    t = MPI.DOUBLE.Create_vector(3, 2, 4)
    data = mm.marshal(t)
    for buf in (bytearray(data), memoryview(data)):
        u = mm.unmarshal(buf)
        assert mm.compare(t, u)[0] == 0
        u.Free()
    t.Free()


def test_compare_explains():
    a = MPI.DOUBLE.Create_vector(3, 2, 4)
    b = MPI.DOUBLE.Create_vector(3, 2, 5)
    c = MPI.DOUBLE.Create_contiguous(6)
    result, why = mm.compare(a, b, mm.IDENTICAL)
    assert result == mm.COMPARE_TYPEMAP and why
    # Same signature (six doubles): equal at the signature level only.
    assert mm.compare(a, c, mm.COMPARE_SIGNATURE) == (0, "")
    result, why = mm.compare(a, c, mm.COMPARE_CONSTRUCTOR)
    assert result == mm.COMPARE_TYPEMAP and why
    for t in (a, b, c):
        t.Free()


def test_signature_hash():
    v = MPI.DOUBLE.Create_vector(3, 2, 4)
    c = MPI.DOUBLE.Create_contiguous(6)
    assert mm.signature_count(v) == 6
    assert mm.signature_hash(v) == mm.signature_hash(c)
    assert mm.signature_hash(v, 2) == mm.signature_hash(MPI.DOUBLE, 12)
    assert mm.signature_hash(v, 1, mm.HASH_GFD8) == mm.signature_hash(c, 1, mm.HASH_GFD8)
    assert mm.signature_hash(v, 1, mm.HASH_GFD8) != mm.signature_hash(v)
    assert mm.signature_prefix_hash(v, 2, 12) == mm.signature_hash(v, 2)
    assert mm.signature_hash(v) != mm.signature_hash(MPI.INT, 6)
    for t in (v, c):
        t.Free()


def test_errors_are_exceptions():
    t = hdf5ish()
    data = mm.marshal(t)
    # A flipped byte in the body: the checksum catches it.
    bad = bytearray(data)
    bad[len(bad) // 2] ^= 0x5A
    with pytest.raises(mm.MarshalError) as e:
        mm.unmarshal(bytes(bad))
    assert e.value.kind in (mm.ERR_CHECKSUM, mm.ERR_CORRUPT)
    assert e.value.message and e.value.code != 0
    assert mm.error_kind(e.value.code) == e.value.kind
    assert MPI.Get_error_class(e.value.code) != MPI.SUCCESS
    # Cut short, garbage, empty.
    for junk in (data[: len(data) - 5], b"MXCT" + b"\xff" * 40, b"", b"\x00" * 3):
        with pytest.raises(mm.MarshalError) as e:
            mm.unmarshal(junk)
        assert e.value.kind in (mm.ERR_CHECKSUM, mm.ERR_CORRUPT), (junk, e.value)
        assert str(e.value) == e.value.message
    # The internal stream has no checksum: a corrupt one is still an error.
    with pytest.raises(mm.MarshalError):
        mm.unmarshal(b"\x07" * 11, "internal")
    with pytest.raises(mm.MarshalError) as e:
        mm.marshal(t, "bogus")
    assert e.value.kind == mm.ERR_UNKNOWN_REPRESENTATION
    assert "bogus" in e.value.message
    with pytest.raises(mm.MarshalError) as e:
        mm.marshal(MPI.DATATYPE_NULL)
    with pytest.raises(mm.MarshalError) as e:
        mm.compare(t, t, 99)
    assert e.value.kind == mm.ERR_INVALID_ARGUMENT
    with pytest.raises(mm.MarshalError) as e:
        mm.signature_prefix_hash(t, 1, 1000)
    assert e.value.kind == mm.ERR_INVALID_ARGUMENT
    # Not a datatype at all: a plain Python error.
    with pytest.raises(AttributeError):
        mm.marshal(42)
    t.Free()


def test_large_type_beyond_the_scratch_buffer():
    # A struct of 600 members: its stream is larger than the binding's
    # 4 KiB buffer, so marshal takes the size-then-marshal path.
    n = 600
    t = MPI.Datatype.Create_struct([1] * n, [8 * i for i in range(n)],
                                   [MPI.DOUBLE if i % 2 else MPI.INT64_T for i in range(n)])
    data = mm.marshal(t)
    assert len(data) > 4096
    u = mm.unmarshal(data)
    assert mm.compare(t, u) == (0, "")
    u.Free()
    t.Free()


@pytest.mark.skipif(size < 2, reason="needs two ranks")
def test_type_exchange_send_recv():
    types = derived()
    if rank == 0:
        for _ in range(2):  # a description, then a reference
            for _, t in types:
                mm.send_type(comm, t, 1, tag=5)
        mm.send_type(comm, MPI.INT, 1, tag=6)
    elif rank == 1:
        for _ in range(2):
            for label, t in types:
                st = MPI.Status()
                u = mm.recv_type(comm, 0, 5, status=st)
                assert st.Get_source() == 0 and st.Get_tag() == 5
                assert mm.compare(t, u) == (0, ""), label
                u.Free()
        st = MPI.Status()
        u = mm.recv_type(comm, status=st)  # MPI_ANY_SOURCE, MPI_ANY_TAG
        assert u == MPI.INT and st.Get_tag() == 6
    for _, t in types:
        t.Free()
    comm.Barrier()


@pytest.mark.skipif(size < 2, reason="needs two ranks")
def test_type_exchange_bcast():
    t = hdf5ish()
    if rank == 0:
        u = mm.bcast_type(comm, t, 0)
        assert u == t
    else:
        u = mm.bcast_type(comm, None, 0)
        assert mm.compare(t, u) == (0, "")
        assert u.Get_name() == "record_t"
        u.Free()
    t.Free()


def test_pickle_round_trip():
    t = hdf5ish()
    theirs = pickle.dumps(t)
    mm.install_pickler()
    try:
        ours = pickle.dumps(t)
        assert mm.marshal(t) in ours
        assert len(ours) < len(theirs)
        u = pickle.loads(ours)
        assert mm.compare(t, u) == (0, "")
        u.Free()
        # Predefined types come back as themselves, DATATYPE_NULL through mpi4py.
        assert pickle.loads(pickle.dumps(MPI.INT)) == MPI.INT
        assert pickle.loads(pickle.dumps(MPI.DATATYPE_NULL)) == MPI.DATATYPE_NULL
        # Inside other objects too.
        obj = pickle.loads(pickle.dumps({"t": [t, MPI.DOUBLE]}))
        assert mm.compare(obj["t"][0], t) == (0, "") and obj["t"][1] == MPI.DOUBLE
        obj["t"][0].Free()
    finally:
        mm.uninstall_pickler()
    assert pickle.dumps(t) == theirs
    t.Free()


@pytest.mark.skipif(size < 2, reason="needs two ranks")
def test_pickle_through_comm_send():
    t = hdf5ish()
    mm.install_pickler()
    try:
        if rank == 0:
            comm.send({"type": t, "count": 3}, dest=1, tag=11)
        elif rank == 1:
            msg = comm.recv(source=0, tag=11)
            u = msg["type"]
            assert msg["count"] == 3
            assert mm.compare(t, u) == (0, "")
            # Committed: usable for a receive at once.
            assert pack(u) == pack(t.Commit())
            u.Free()
        got = comm.bcast(t if rank == 0 else None, root=0)
        assert mm.compare(t, got) == (0, "")
        if got != t:
            got.Free()
    finally:
        mm.uninstall_pickler()
    t.Free()
