#!/usr/bin/env bash
# Runs one cargo test binary many times, to find intermittent failures: a
# flaky test is a bug to find. Counts the failing runs and keeps their logs.
#
#   eval "$(scripts/mpi-env.sh abi)"
#   scripts/soak.sh roundtrip 1000            # tests/roundtrip.rs, 1000 runs
#   SOAK_THREADS=2 SOAK_UNTIL=00:10 scripts/soak.sh threads 1000
#
# The binary is the newest build of tests/NAME.rs in $CARGO_TARGET_DIR
# (build it first: cargo test --no-run $MPIX_CARGO_FLAGS --test NAME).
# SOAK_THREADS: the test threads (default 2); SOAK_UNTIL: a clock time
# (HH:MM, the next one to come) after which no new run starts. Logs of failing runs go to
# $CARGO_TARGET_DIR/soak/NAME-RUN.log.
set -uo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/soak.sh TEST_NAME RUNS}
runs=${2:-1000}
target=${CARGO_TARGET_DIR:-target}
bin=$(ls -t "$target"/debug/deps/"$name"-* 2>/dev/null | grep -v '\.d$' | head -1)
[ -x "$bin" ] || { echo "soak: no test binary for $name in $target (build it first)" >&2; exit 2; }
mkdir -p "$target/soak"
until_s=
if [ -n "${SOAK_UNTIL:-}" ]; then
    until_s=$(date -d "$SOAK_UNTIL" +%s)
    # A time already past today is tomorrow's.
    [ "$until_s" -gt "$(date +%s)" ] || until_s=$(date -d "tomorrow $SOAK_UNTIL" +%s)
fi
failed=0
done_runs=0
for i in $(seq 1 "$runs"); do
    if [ -n "$until_s" ] && [ "$(date +%s)" -ge "$until_s" ]; then break; fi
    log="$target/soak/$name-$i.log"
    if "$bin" --test-threads="${SOAK_THREADS:-2}" -q >"$log" 2>&1; then
        rm -f "$log"
    else
        failed=$((failed + 1))
        echo "soak: run $i of $name failed (log: $log)"
    fi
    done_runs=$i
done
echo "soak: $name: $done_runs runs, $failed failed (${SOAK_THREADS:-2} test threads, ${MPIX_MPI:-?})"
[ "$failed" -eq 0 ]
