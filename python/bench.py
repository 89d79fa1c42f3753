"""Marshal and unmarshal through the mpix_marshal package beside mpi4py's
own pickling of the same ``MPI.Datatype``, in one run, and the binding's
overhead over the C API (the same calls in a Rust loop inside the
extension, no Python in between).

    python python/bench.py [--seconds S]     (one process; mpiexec -n 1 works too)

Types: MPI_INT, a vector, the HDF5-like compound of benches/marshal.rs
(tests/common/mod.rs's hdf5_complex(false)) and a struct of 100 members.
Prints one line per type; "x pickle" is mpi4py's pickle.dumps time over
mpix_marshal.marshal's."""

import argparse
import pickle
import sys
import time

# The installed package, not python/mpix_marshal/ beside this script (it
# has no extension).
if sys.path and sys.path[0] == __import__("os").path.dirname(__import__("os").path.abspath(__file__)):
    sys.path.pop(0)

from mpi4py import MPI  # noqa: E402

import mpix_marshal as mm  # noqa: E402


def hdf5_complex():
    """benches/marshal.rs's HDF5 type, without the MPI_LB/MPI_UB markers."""
    def wrap(x, d, u):
        if d == 0:
            r = x.Create_resized(0, u)
        else:
            s = MPI.Datatype.Create_struct([1], [d], [x])
            r = s.Create_resized(0, u)
            s.Free()
        x.Free()
        return r

    def vec(n, x):
        v = x.Create_vector(1, n, 1)
        x.Free()
        return v

    def make(d1):
        ctg = MPI.BYTE.Create_contiguous(4)
        s1 = wrap(vec(5, ctg), d1, 40)
        s2 = wrap(vec(5, s1), 2000, 400)
        s3 = wrap(vec(5, s2), 0, 4000)
        s4 = wrap(vec(5, s3), 0, 40000)
        return wrap(vec(1, s4), 160000, 200000)

    a, b = make(0), make(20)
    top = MPI.Datatype.Create_struct([1, 1], [0, 0], [a, b])
    a.Free()
    b.Free()
    return top


def struct_100():
    pool = [MPI.INT, MPI.DOUBLE, MPI.CHAR, MPI.FLOAT, MPI.LONG]
    n = 100
    return MPI.Datatype.Create_struct([(i % 3) + 1 for i in range(n)],
                                      [i * 40 for i in range(n)],
                                      [pool[i % 5] for i in range(n)])


def calibrate(f, target=0.005):
    """Calls of f() that take about `target` seconds."""
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            f()
        dt = time.perf_counter() - t
        if dt > target / 4:
            return max(1, int(n * target / dt))
        n *= 4


def measure(cases, seconds):
    """Seconds per call of each case: {key: (f, per)} where f() does `per`
    calls. Rounds go over every case in turn (a busy machine slows them
    alike) and each keeps its best round."""
    counts = {k: calibrate(f) for k, (f, _) in cases.items()}
    best = {k: float("inf") for k in cases}
    rounds = max(5, int(seconds / (0.005 * len(cases))))
    for _ in range(rounds):
        for k, (f, per) in cases.items():
            n = counts[k]
            t = time.perf_counter()
            for _ in range(n):
                f()
            best[k] = min(best[k], (time.perf_counter() - t) / (n * per))
    return best


def fmt(s):
    ns = s * 1e9
    if ns < 1000:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns / 1e6:.2f} ms"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    args = ap.parse_args()
    sec = args.seconds

    types = [
        ("MPI_INT", MPI.INT),
        ("vector (3 x 2 doubles, stride 4)", MPI.DOUBLE.Create_vector(3, 2, 4)),
        ("HDF5 compound (benches/marshal.rs)", hdf5_complex()),
        ("struct of 100 members", struct_100()),
    ]
    print(f"mpix_marshal {'.'.join(map(str, mm.version()))} ({mm._native._built_for}), "
          f"mpi4py {sys.modules['mpi4py'].__version__}, {MPI.Get_library_version().splitlines()[0].strip()}")
    print(f"Python {sys.version.split()[0]}; best round of each, about {sec:.1f} s per type; "
          "external representation")
    cases = {"noop": (lambda: mm._native._noop(MPI.INT), 1)}
    rows = []
    for name, t in types:
        data = mm.marshal(t)
        theirs = pickle.dumps(t, pickle.HIGHEST_PROTOCOL)
        rows.append((name, len(data), len(theirs)))

        def um(data=data):
            u = mm.unmarshal(data)
            if not u.is_predefined:
                u.Free()

        def pl(theirs=theirs):
            u = pickle.loads(theirs)
            if not u.is_predefined:
                u.Free()

        cases[(name, "marshal")] = (lambda t=t: mm.marshal(t), 1)
        cases[(name, "marshal C")] = (lambda t=t: mm._native._c_marshal_loop(t, "external", 100), 100)
        cases[(name, "dumps")] = (lambda t=t: pickle.dumps(t, pickle.HIGHEST_PROTOCOL), 1)
        cases[(name, "unmarshal")] = (um, 1)
        cases[(name, "unmarshal C")] = (lambda d=data: mm._native._c_unmarshal_loop(d, "external", 100), 100)
        cases[(name, "loads")] = (pl, 1)
    r = measure(cases, sec * len(types))
    print(f"a call that only reads the handle (mm._native._noop(MPI.INT)): {fmt(r['noop'])}")
    print()
    hdr = (f"{'type':36} {'bytes':>6} {'pickle':>6} | {'marshal':>9} {'C API':>9} {'overhead':>9} "
           f"{'pickle.dumps':>12} {'x pickle':>8} | {'unmarshal':>9} {'C API':>9} {'pickle.loads':>12}")
    print(hdr)
    print("-" * len(hdr))
    for name, nb, np_ in rows:
        m, mc, p = r[(name, "marshal")], r[(name, "marshal C")], r[(name, "dumps")]
        u, uc, pu = r[(name, "unmarshal")], r[(name, "unmarshal C")], r[(name, "loads")]
        print(f"{name:36} {nb:>6} {np_:>6} | {fmt(m):>9} {fmt(mc):>9} {fmt(m - mc):>9} "
              f"{fmt(p):>12} {p / m:>7.0f}x | {fmt(u):>9} {fmt(uc):>9} {fmt(pu):>12}")
    for _, t in types[1:]:
        t.Free()
    print()
    print("bytes: our external stream; pickle: mpi4py's pickle of the same Datatype. "
          "C API: the same call in a loop inside the extension; overhead = marshal - C API.")


if __name__ == "__main__":
    main()
