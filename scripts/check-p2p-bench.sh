#!/usr/bin/env bash
# The point-to-point checker's overhead (issue 16; not a test):
# check/tests/c/p2p_overhead.c (ping-pong latency and bandwidth, 1 B to
# 4 MiB, MPI_BYTE and a strided MPI_Type_vector of doubles, and an 8-byte
# message rate) under $MPIEXEC -n 2, in three configurations, in turn:
#   plain    without the checker;
#   floor    without the checker, the program itself sending a 48-byte
#            message of its own with each message (what the checker adds
#            on the wire, without the checker's work: the least a
#            companion-message design can cost);
#   checked  LD_PRELOAD=libmpix_check.so MPIX_CHECK_P2P=1;
#   notypes  checked with MPIX_CHECK_TYPES=0 (issue 30: the datatype checks
#            off, the same-run baseline of what they cost);
#   batched  checked with MPIX_CHECK_VERIFY=batched (issue 31: the
#            companions travel in batches of 64).
# The cycle runs CHECK_P2P_BENCH_ROUNDS times (default 2; each run about
# 5-10 s on an idle machine) and each line keeps its best run (lowest
# latency, highest rate): on a shared machine noise only adds time, and
# alternating the configurations spreads drift over all of them. Then one
# table: size, type, median latency plain / floor / checked / notypes (us),
# checked/plain of the medians and of the best repetitions (the least
# disturbed: the fairer ratio on a busy machine), the batched median and
# batched/plain of the medians, bandwidth plain /
# checked (MB/s, of the medians), and the message rates (median; best in
# parentheses) with their ratio. CHECK_P2P_BENCH_KEEP=1 keeps the earlier
# invocations' runs in the table (more rounds, when the machine is busy).
# Goals (issue 16): checked/plain <= 2 for small messages, <= 1.05 at 1 MiB;
# (issue 30) checked/notypes: what the datatype checks add per call.
# Then check/tests/c/type_overhead.c (-n 1, sends to and receives from
# MPI_PROC_NULL: the calls alone, no message) without the checker, with
# it and MPIX_CHECK_TYPES=0, and with it: ns per call, best of the rounds,
# and checked - notypes, the datatype checks' own cost per call (goal:
# no more than a cached hash look-up, tens of ns).
# Last, check/tests/c/p2p_self.c (-n 1, messages to itself) without the
# checker, with MPIX_CHECK_P2P=0 and in both modes: the checker's own work
# per message, ns (issue 31), without the noise of a peer.
# Usage: scripts/check-p2p-bench.sh TARGET_DIR
#   MPICC, MPIEXEC, MPIEXEC_ARGS select the MPI (as for the other scripts).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-target}
MPICC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}
read -ra mpiexec_args <<<"${MPIEXEC_ARGS:-}"
lib="$(pwd)/$target/release/libmpix_check.so"
out="$target/check-p2p-bench"
[ -f "$lib" ] || { echo "no $lib: build with cargo build --release -p mpix-check first"; exit 1; }
mkdir -p "$out"
"$MPICC" -O2 -std=c99 -Wall -Wextra -Werror -o "$out/p2p_overhead" check/tests/c/p2p_overhead.c
"$MPICC" -O2 -std=c99 -Wall -Wextra -Werror -o "$out/type_overhead" check/tests/c/type_overhead.c
"$MPICC" -O2 -std=c99 -Wall -Wextra -Werror -o "$out/p2p_self" check/tests/c/p2p_self.c
[ -n "${CHECK_P2P_BENCH_KEEP:-}" ] || rm -f "$out"/*.txt
stamp=$(date +%s)
for round in $(seq "${CHECK_P2P_BENCH_ROUNDS:-2}"); do
    "$MPIEXEC" "${mpiexec_args[@]}" -n 2 "$out/p2p_overhead" plain >"$out/plain-$stamp-$round.txt"
    "$MPIEXEC" "${mpiexec_args[@]}" -n 2 "$out/p2p_overhead" floor >"$out/floor-$stamp-$round.txt"
    "$MPIEXEC" "${mpiexec_args[@]}" -n 2 env LD_PRELOAD="$lib" MPIX_CHECK_P2P=1 \
        "$out/p2p_overhead" checked >"$out/checked-$stamp-$round.txt"
    "$MPIEXEC" "${mpiexec_args[@]}" -n 2 env LD_PRELOAD="$lib" MPIX_CHECK_P2P=1 MPIX_CHECK_TYPES=0 \
        "$out/p2p_overhead" notypes >"$out/notypes-$stamp-$round.txt"
    "$MPIEXEC" "${mpiexec_args[@]}" -n 2 env LD_PRELOAD="$lib" MPIX_CHECK_P2P=1 MPIX_CHECK_VERIFY=batched \
        "$out/p2p_overhead" batched >"$out/batched-$stamp-$round.txt"
done
# Lines: pingpong LABEL SIZE TYPE MEDIAN_US MB/S BEST_US
#        rate LABEL 8 byte MEDIAN_MSGS/S BEST_MSGS/S
cat "$out"/*.txt | awk '
    $1 == "pingpong" {
        k = $3 " " $4
        if (!(k in seen)) { seen[k] = 1; order[n++] = k }
        if (!((k, $2) in us) || $5 < us[k, $2]) { us[k, $2] = $5; bw[k, $2] = $6 }
        if (!((k, $2) in best) || $7 < best[k, $2]) best[k, $2] = $7
    }
    $1 == "rate" {
        if ($5 > rate[$2]) rate[$2] = $5
        if ($6 > rbest[$2]) rbest[$2] = $6
    }
    END {
        printf "%8s %-6s %10s %10s %10s %10s %7s %7s %7s %10s %7s %10s %10s\n", "bytes", "type", "plain us", "floor us",
            "checked us", "notypes us", "ratio", "best", "types", "batched us", "b.ratio", "plain MB/s", "chk MB/s"
        for (i = 0; i < n; i++) {
            k = order[i]; split(k, f, " ")
            printf "%8d %-6s %10.3f %10.3f %10.3f %10.3f %7.2f %7.2f %7.3f %10.3f %7.2f %10.1f %10.1f\n", f[1], f[2], us[k, "plain"],
                us[k, "floor"], us[k, "checked"], us[k, "notypes"], us[k, "checked"] / us[k, "plain"],
                best[k, "checked"] / best[k, "plain"], us[k, "checked"] / us[k, "notypes"],
                us[k, "batched"], us[k, "batched"] / us[k, "plain"], bw[k, "plain"], bw[k, "checked"]
        }
        printf "message rate (64 x 8 B windows, /s): plain %.0f (%.0f), floor %.0f (%.0f), checked %.0f (%.0f), notypes %.0f (%.0f), batched %.0f (%.0f); plain/checked x%.2f (x%.2f), batched/plain %.0f %%\n",
            rate["plain"], rbest["plain"], rate["floor"], rbest["floor"], rate["checked"], rbest["checked"],
            rate["notypes"], rbest["notypes"], rate["batched"], rbest["batched"], rate["plain"] / rate["checked"],
            rbest["plain"] / rbest["checked"], 100 * rate["batched"] / rate["plain"]
        print "(types: checked/notypes of the medians, what the datatype checks add)"
    }'
for round in $(seq "${CHECK_P2P_BENCH_ROUNDS:-2}"); do
    "$MPIEXEC" "${mpiexec_args[@]}" -n 1 "$out/type_overhead" plain
    "$MPIEXEC" "${mpiexec_args[@]}" -n 1 env LD_PRELOAD="$lib" MPIX_CHECK_TYPES=0 "$out/type_overhead" notypes
    "$MPIEXEC" "${mpiexec_args[@]}" -n 1 env LD_PRELOAD="$lib" "$out/type_overhead" checked
done >"$out/calls-$stamp.log"
awk '
    $1 == "calls" {
        k = $3 " " $4 " " $5
        if (!(k in seen)) { seen[k] = 1; order[n++] = k }
        if (!((k, $2) in ns) || $6 < ns[k, $2]) ns[k, $2] = $6
    }
    END {
        printf "\n%-9s %-7s %-11s %9s %11s %11s %15s\n", "call", "type", "registry", "plain ns", "notypes ns",
            "checked ns", "type checks ns"
        for (i = 0; i < n; i++) {
            k = order[i]; split(k, f, " ")
            printf "%-9s %-7s %-11s %9.1f %11.1f %11.1f %15.1f\n", f[1], f[2], f[3], ns[k, "plain"],
                ns[k, "notypes"], ns[k, "checked"], ns[k, "checked"] - ns[k, "notypes"]
        }
    }' "$out/calls-$stamp.log"
# The checker's own work per message (check/tests/c/p2p_self.c: one
# process sends to itself, no peer to wait for): ns per message without
# the checker, with MPIX_CHECK_P2P=0 (the wrappers, the hang watch and the
# datatype checks), and with the point-to-point checks in both modes.
for round in $(seq "${CHECK_P2P_BENCH_ROUNDS:-2}"); do
    "$MPIEXEC" "${mpiexec_args[@]}" -n 1 "$out/p2p_self" plain
    "$MPIEXEC" "${mpiexec_args[@]}" -n 1 env LD_PRELOAD="$lib" MPIX_CHECK_P2P=0 "$out/p2p_self" off
    "$MPIEXEC" "${mpiexec_args[@]}" -n 1 env LD_PRELOAD="$lib" "$out/p2p_self" immediate
    "$MPIEXEC" "${mpiexec_args[@]}" -n 1 env LD_PRELOAD="$lib" MPIX_CHECK_VERIFY=batched "$out/p2p_self" batched
done >"$out/self-$stamp.log"
awk '
    $1 == "self" {
        k = $3 " " $4
        if (!(k in seen)) { seen[k] = 1; order[n++] = k }
        if (!((k, $2) in ns) || $5 < ns[k, $2]) ns[k, $2] = $5
    }
    END {
        printf "\n%-7s %-7s %9s %9s %12s %10s %14s\n", "window", "type", "plain ns", "p2p off", "immediate", "batched",
            "batched-plain"
        for (i = 0; i < n; i++) {
            k = order[i]; split(k, f, " ")
            printf "%-7s %-7s %9.1f %9.1f %12.1f %10.1f %14.1f\n", f[1], f[2], ns[k, "plain"], ns[k, "off"],
                ns[k, "immediate"], ns[k, "batched"], ns[k, "batched"] - ns[k, "plain"]
        }
        print "(ns per message, both ends in one process; batched-plain: the checker'"'"'s work per message)"
    }' "$out/self-$stamp.log"
