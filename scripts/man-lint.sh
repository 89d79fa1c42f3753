#!/usr/bin/env bash
# Writes every man page (the generator target/debug/mpix-marshal-man, from
# include/mpix_marshal.h, the mpix-marshal command's clap definitions and
# man/) into a temporary directory and lints each: `mandoc -T lint -W
# warning` must print nothing, and rendered by man at 80 columns no line
# may be longer. Needs mandoc and man-db (Debian packages mandoc, man-db).
#
# Usage: scripts/man-lint.sh TARGET_DIR   (after cargo build in TARGET_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/man-lint.sh TARGET_DIR}
fail() { echo "man-lint: FAILED: $*" >&2; exit 1; }
for tool in mandoc man; do
    command -v "$tool" >/dev/null \
        || fail "no $tool: install the Debian packages mandoc and man-db (apt-get install mandoc man-db)"
done
gen=$target/debug/mpix-marshal-man
[ -x "$gen" ] || fail "$gen is missing: cargo build -p mpix-marshal-cli first"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$gen" --out "$out" >/dev/null
pages=("$out"/man*/*)
bad=0
for page in "${pages[@]}"; do
    lint=$(mandoc -T lint -W warning "$page" 2>&1) || true
    if [ -n "$lint" ]; then
        echo "$lint" >&2
        bad=$((bad + 1))
    fi
    # Characters, not bytes: the pages may render non-ASCII letters.
    long=$(MANWIDTH=80 man -l "$page" 2>&1 | perl -CS -ne 'print if length($_) > 81')
    if [ -n "$long" ]; then
        printf '%s: lines over 80 columns:\n%s\n' "${page#"$out"/}" "$long" >&2
        bad=$((bad + 1))
    fi
done
[ "$bad" -eq 0 ] || fail "$bad problems in ${#pages[@]} pages"
echo "man-lint: ${#pages[@]} pages, no mandoc warning, no line over 80 columns"
