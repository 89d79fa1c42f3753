"""One archive, several languages (see interop.c): `python interop.py write
FILE` marshals the tests' record type to FILE; `read FILE` checks FILE's type
has its typemap and name, packs the same bytes and marshals back to FILE.
`write-fortran FILE` and `read-fortran FILE` do the same with the Fortran
tests' record type (fortran/tests/records_c.c's record_type), whose
archives fortran/tests/records_f08 writes and reads."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

from mpi4py import MPI  # noqa: E402

import mpix_marshal as mm  # noqa: E402
from test_mpix_marshal import hdf5ish, pack  # noqa: E402

def fortran_record():
    """fortran/tests: a SEQUENCE record of 3 DOUBLE PRECISION, an INTEGER id
    and 4 INTEGER flags (and a pad), 48 bytes apart, named "record"."""
    s = MPI.Datatype.Create_struct(
        [3, 1, 4], [0, 24, 28], [MPI.DOUBLE_PRECISION, MPI.INTEGER, MPI.INTEGER]
    )
    t = s.Create_resized(0, 48)
    s.Free()
    t.Set_name("record")
    return t


mode, path = sys.argv[1], sys.argv[2]
t = (fortran_record() if mode.endswith("-fortran") else hdf5ish()).Commit()
mode = mode.removesuffix("-fortran")
if mode == "write":
    data = mm.marshal(t)
    with open(path, "wb") as f:
        f.write(data)
    print(f"interop: Python wrote {len(data)} bytes to {path}")
elif mode == "read":
    with open(path, "rb") as f:
        data = f.read()
    u = mm.unmarshal(data).Commit()
    # C builds with the classic constructors, mpi4py with the large-count
    # ones where the MPI has them: equal up to the typemap (see interop.c).
    result, why = mm.compare(t, u, mm.COMPARE_TYPEMAP)
    assert result == 0, f"the archive's typemap differs from Python's type: {why}"
    assert u.Get_name() == t.Get_name(), u.Get_name()
    assert pack(u) == pack(t), "the archive's type packs other bytes"
    assert mm.marshal(u) == data, "the rebuilt type marshals to other bytes"
    print(f"interop: Python read {len(data)} bytes from {path}: same typemap, name and "
          "packed bytes as Python's type, marshals back to the same bytes")
    u.Free()
else:
    sys.exit("usage: interop.py read|write|read-fortran|write-fortran FILE")
t.Free()
