#!/usr/bin/env bash
# Fuzzes every decoder with cargo-fuzz (libFuzzer, AddressSanitizer): the
# targets of fuzz/ (external, internal, compressed, attributes, header),
# each for SECONDS_PER_TARGET seconds (default 30), from seeds written
# anew each run (the golden vectors and the test corpus, in all three
# representations). Fails if any target finds a crash, a leak, a timeout
# or a broken invariant; its input is left in fuzz/artifacts/TARGET/.
#
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Uses the nightly toolchain when there is one, else the default (stable)
# one with RUSTC_BOOTSTRAP=1 (cargo-fuzz needs -Z flags); FUZZ_TOOLCHAIN
# chooses one. FUZZ_SANITIZER (default address) is passed to
# `cargo fuzz -s`; FUZZ_ARGS are extra libFuzzer options.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift $(($# > 0 ? 1 : 0))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(external internal compressed attributes header)

# Only MPICH is needed (and libclang): what the demo needs.
command -v mpicc.mpich >/dev/null || bash scripts/setup.sh --demo
export MPICC=mpicc.mpich
# UCX (MPICH's transport) patches mmap at load time, which crashes under
# AddressSanitizer's interceptors before main; and it keeps memory from
# MPI_Init that LeakSanitizer would report.
export UCX_MEM_MMAP_HOOK_MODE=none
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp:print_suppressions=0"

# FUZZ_TOOLCHAIN (e.g. stable) picks a toolchain; else nightly if installed
# (listed, not run: rustup may try to install a toolchain it is asked to run).
toolchain=()
if [ -n "${FUZZ_TOOLCHAIN:-}" ]; then
    toolchain=(+"$FUZZ_TOOLCHAIN")
elif command -v rustup >/dev/null && rustup toolchain list | grep -q "^nightly"; then
    toolchain=(+nightly)
fi
# cargo-fuzz passes -Z flags (the sanitizer), which a stable compiler takes
# only with RUSTC_BOOTSTRAP=1.
cargo "${toolchain[@]}" --version | grep -q nightly || export RUSTC_BOOTSTRAP=1
cargo "${toolchain[@]}" fuzz --version >/dev/null 2>&1 ||
    cargo install cargo-fuzz --locked || cargo install cargo-fuzz
echo "fuzz: $(cargo "${toolchain[@]}" --version)${RUSTC_BOOTSTRAP:+ with RUSTC_BOOTSTRAP=1}, $seconds s per target"

sanitizer=${FUZZ_SANITIZER:-address}
cargo "${toolchain[@]}" fuzz build -s "$sanitizer"

# Seeds: a plain (uninstrumented) build of fuzz/examples/seeds.rs.
rm -rf fuzz/seeds
(cd fuzz && CARGO_TARGET_DIR=target/seeds cargo "${toolchain[@]}" run -q --example seeds -- seeds)

mkdir -p fuzz/logs
passed=0
failed=0
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t" "fuzz/seeds/$t"
    log="fuzz/logs/$t.log"
    echo "=== fuzz $t ($seconds s)"
    # shellcheck disable=SC2086
    if cargo "${toolchain[@]}" fuzz run -s "$sanitizer" "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- \
        -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
        ${FUZZ_ARGS:-} >"$log" 2>&1; then
        passed=$((passed + 1))
        grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true
    else
        failed=$((failed + 1))
        echo "=== fuzz $t FAILED (log: $log)"
        grep -vE '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)|NEW_FUNC' "$log" | tail -60
    fi
done
echo "fuzz targets: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
