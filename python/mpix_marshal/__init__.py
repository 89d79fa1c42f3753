"""Marshal, compare and exchange MPI datatypes with mpix-marshal, on mpi4py.

Every function takes and returns ``mpi4py.MPI.Datatype`` objects (and
``MPI.Comm`` objects for the type exchange)::

    from mpi4py import MPI
    import mpix_marshal as mm

    t = MPI.DOUBLE.Create_vector(3, 2, 4)
    data = mm.marshal(t)                 # bytes, the "external" stream
    u = mm.unmarshal(data)               # a new (uncommitted) MPI.Datatype
    assert mm.compare(t, u) == (0, "")   # identical: tree, names, attributes

The extension is built against the MPI of the environment (``pip install
./python`` with that MPI's ``mpicc`` on PATH or in ``$MPICC``) and must run
with the same MPI as mpi4py loads.

Errors are :class:`MarshalError` exceptions with the library's message,
the MPI error code and the ``ERR_*`` kind.
"""

import copyreg as _copyreg

from mpi4py import MPI as _MPI

from . import _native
from ._native import (
    bcast_type,
    compare,
    error_kind,
    exchange_setup,
    marshal,
    marshal_size,
    marshaled_signature_hash,
    recv_type,
    send_type,
    signature_count,
    signature_hash,
    signature_prefix_hash,
    unmarshal,
    version,
)

__all__ = [
    "MarshalError",
    "marshal",
    "marshal_size",
    "unmarshal",
    "marshaled_signature_hash",
    "compare",
    "signature_count",
    "signature_hash",
    "signature_prefix_hash",
    "error_kind",
    "send_type",
    "recv_type",
    "bcast_type",
    "exchange_setup",
    "version",
    "install_pickler",
    "uninstall_pickler",
]

# Comparison levels (MPIX_COMPARE_*): each includes the weaker ones.
COMPARE_SIGNATURE = 1
COMPARE_TYPEMAP = 2
COMPARE_CONSTRUCTOR = 3
COMPARE_NAMES = 4
COMPARE_ATTRIBUTES = 5
#: The strongest level: the same tree, names and marshalled attributes.
IDENTICAL = COMPARE_ATTRIBUTES

# Signature hash families (MPIX_HASH_*).
HASH_GROPP = 1
HASH_XOR_BS1 = 2
HASH_MMM_BS1 = 3
HASH_GFD8 = 4
HASH_GFD16 = 5
HASH_CRC32 = 6
HASH_DEFAULT64 = 7
HASH_DEFAULT = HASH_DEFAULT64

# Error kinds (MPIX_MARSHAL_ERR_*), MarshalError.kind.
ERR_NONE = 0
ERR_UNKNOWN_REPRESENTATION = 1
ERR_BUFFER_TOO_SMALL = 2
ERR_CORRUPT = 3
ERR_UNSUPPORTED = 4
ERR_INVALID_ARGUMENT = 5
ERR_INTERNAL = 6
ERR_ATTRIBUTE = 7
ERR_EXCHANGE = 8
ERR_CHECKSUM = 9


class MarshalError(Exception):
    """An error of the library: ``message``, the MPI error ``code`` the C
    API returned (``MPI.Get_error_class(code)`` is the library's class
    for the kind) and the ``kind`` (an ``ERR_*`` constant, ``ERR_NONE``
    for an MPI error passed through)."""

    def __init__(self, message, code, kind):
        super().__init__(message, code, kind)
        self.message = message
        self.code = code
        self.kind = kind

    def __str__(self):
        return self.message


_native._set_error_class(MarshalError)


# -- pickle ------------------------------------------------------------------

def _unpickle(data):
    """Rebuilds a pickled datatype, committed as mpi4py's own unpickling
    gives it (a predefined type comes back as itself)."""
    t = unmarshal(data)
    if t.is_predefined:
        return t
    return t.Commit()


def _reduce(dtype):
    if dtype == _MPI.DATATYPE_NULL:
        return dtype.__reduce__()
    return (_unpickle, (marshal(dtype),))


def install_pickler():
    """Makes ``pickle`` (and so mpi4py's lowercase ``comm.send``,
    ``comm.bcast``, ...) pickle ``MPI.Datatype`` objects as this library's
    external stream: a committed copy on the other side, equal to the
    original by :func:`compare` at every level. Process-wide; undone by
    :func:`uninstall_pickler`. Every process that unpickles needs the
    package installed, not installed as pickler: pickle imports
    ``mpix_marshal`` by name to rebuild the type."""
    _copyreg.pickle(_MPI.Datatype, _reduce)


def uninstall_pickler():
    """Gives ``MPI.Datatype`` back to mpi4py's own pickling."""
    if _copyreg.dispatch_table.get(_MPI.Datatype) is _reduce:
        del _copyreg.dispatch_table[_MPI.Datatype]
