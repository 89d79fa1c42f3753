"""One archive, two languages (see interop.c): `python interop.py write
FILE` marshals the tests' record type to FILE; `read FILE` checks FILE is
identical to it and packs the same bytes."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

from mpi4py import MPI  # noqa: E402

import mpix_marshal as mm  # noqa: E402
from test_mpix_marshal import hdf5ish, pack  # noqa: E402

mode, path = sys.argv[1], sys.argv[2]
t = hdf5ish().Commit()
if mode == "write":
    data = mm.marshal(t)
    with open(path, "wb") as f:
        f.write(data)
    print(f"interop: Python wrote {len(data)} bytes to {path}")
elif mode == "read":
    with open(path, "rb") as f:
        data = f.read()
    u = mm.unmarshal(data).Commit()
    result, why = mm.compare(t, u, mm.IDENTICAL)
    assert result == 0, f"the archive differs from Python's type: {why}"
    assert pack(u) == pack(t), "the archive's type packs other bytes"
    print(f"interop: Python read {len(data)} bytes from {path}: identical to Python's type")
    u.Free()
else:
    sys.exit("usage: interop.py read|write FILE")
t.Free()
