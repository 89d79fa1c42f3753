#!/usr/bin/env bash
# Builds the C tests against the library built for $MPICC (default mpicc)
# and runs them, the multi-process ones under mpiexec -n 2 and -n 4.
# Usage: scripts/c-tests.sh TARGET_DIR   (the cargo target dir of that build)
# Optional, for scripts/sanitize.sh (all unset: the plain run described above):
#   CTESTS_CFLAGS   extra compiler flags for the C programs
#   CTESTS_LDFLAGS  extra linker flags (and objects) for the C programs
#   CTESTS_RUNNER   a command put before each test program, after mpiexec -n N
#   CTESTS_NP       the -n values of the multi-process tests (default "2 4")
#   CTESTS_OUT      where the programs and logs go (default TARGET_DIR/ctests)
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-target}
MPICC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}
lib="$target/debug"
out=${CTESTS_OUT:-$target/ctests}
mkdir -p "$out"
cflags=(-std=c99 -Wall -Wextra -Werror -Iinclude -Itests/c)
ldflags=(-L"$lib" -lmpix_marshal -Wl,-rpath,"$(cd "$lib" && pwd)")
read -ra extra <<<"${CTESTS_CFLAGS:-}" && cflags+=("${extra[@]}")
read -ra extra <<<"${CTESTS_LDFLAGS:-}" && ldflags+=("${extra[@]}")
read -ra runner <<<"${CTESTS_RUNNER:-}"
passed=0
failed=0
run() { # name, command...
    local name=$1; shift
    if "$@" >"$out/$name.log" 2>&1; then
        passed=$((passed + 1)); echo "ok   $name"; grep -h "checks passed" "$out/$name.log" | sed 's/^/     /' || true
    else
        failed=$((failed + 1)); echo "FAIL $name (log: $out/$name.log)"; tail -n 30 "$out/$name.log"
    fi
}

# The shared library exports the MPIX_ API and the MPI_Type_free_keyval
# wrapper, nothing else (no helper, no C shim symbol).
exports() {
    local got want
    got=$(nm -D --defined-only "$lib/libmpix_marshal.so" | awk '{print $3}' | sort)
    want=$( (sed -n 's/^int \(MPIX_[A-Za-z_]*\)(.*/\1/p' include/mpix_marshal.h; echo MPI_Type_free_keyval) | sort)
    echo "exported: $(echo "$got" | wc -l) symbols"
    diff <(echo "$want") <(echo "$got") && [ -n "$got" ]
}
run exports exports

# The header compiles cleanly as C99 and as C++.
run header-c99 "$MPICC" "${cflags[@]}" -pedantic -x c -c -o "$out/h.o" - <<<'#include <mpix_marshal.h>
int f(void) { return MPIX_MARSHAL_ERR_CORRUPT; }'
# (The MPIs' own C++ bindings are skipped: they do not build with -Werror.)
run header-cxx "$MPICC" -DOMPI_SKIP_MPICXX=1 -DMPICH_SKIP_MPICXX=1 -std=c++11 -Wall -Wextra -Werror -Iinclude -x c++ -c -o "$out/hpp.o" - <<<'#include <mpix_marshal.h>
int f() { MPI_Aint n; return MPIX_Type_marshal_size("external", MPI_INT, &n); }'

for prog in c_api keyval_free mp_send rma attrs exchange demo_archive skeleton_content am_rma; do
    src=tests/c/$prog.c
    [ -f "$src" ] || src=examples/$prog.c
    run "build-$prog" "$MPICC" "${cflags[@]}" -o "$out/$prog" "$src" "${ldflags[@]}"
done
np() { "$MPIEXEC" ${MPIEXEC_ARGS:-} -n "$1" "${runner[@]}" "${@:2}"; }
run c_api np 1 "$out/c_api"
run keyval_free np 1 "$out/keyval_free"
for prog in mp_send rma attrs exchange skeleton_content; do
    for n in ${CTESTS_NP:-2 4}; do
        run "$prog-$n" np "$n" "$out/$prog"
    done
done
# Active-message RMA with the type exchange: 2 operations per method (two
# rounds: on MPICH 4, -n 4 on 2 cores took 20.7 s at 20 operations, 5.4 s
# at 2), the
# target windows checked (the benchmark: examples/am_rma.c without argument).
for n in ${CTESTS_NP:-2 4}; do
    run "am_rma-$n" np "$n" "$out/am_rma" 2
done
# The type exchange between processes of different builds (as far as the
# exchange can tell): the internal representation is not used between them.
run exchange-mixed-builds "$MPIEXEC" ${MPIEXEC_ARGS:-} -n 1 env MPIX_TYPE_EXCHANGE_BUILD_TAG=other "${runner[@]}" "$out/exchange" : -n 1 "${runner[@]}" "$out/exchange"
run demo-archive bash -c "cd '$out' && rm -f demo.mxdt && $MPIEXEC ${MPIEXEC_ARGS:-} -n 1 ${CTESTS_RUNNER:-} ./demo_archive write demo.mxdt && $MPIEXEC ${MPIEXEC_ARGS:-} -n 2 ${CTESTS_RUNNER:-} ./demo_archive read demo.mxdt"
# mpix-marshal dump --data on files every process wrote through MPI-IO, in
# both datareps (inspect/tests/data-io.sh); the plain run only (the
# command is no part of the sanitized builds).
if [ -z "${CTESTS_CFLAGS:-}${CTESTS_RUNNER:-}" ]; then
    run build-data_write "$MPICC" "${cflags[@]}" -o "$out/data_write" inspect/tests/c/data_write.c "${ldflags[@]}"
    for n in ${CTESTS_NP:-2 4}; do
        run "dump-data-$n" inspect/tests/data-io.sh "$out/data_write" "$lib/mpix-marshal" "$n"
    done
fi
echo "C tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
