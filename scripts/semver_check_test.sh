#!/usr/bin/env bash
# Tests scripts/semver-check.sh's choice of baseline without running
# cargo-semver-checks: in a scratch clone, a crate without a release tag
# is reported and skipped, and a crate with several is checked against
# its newest by version (0.10.0 after 0.9.0, not before it), whatever
# other crates' tags or look-alike tags exist.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git clone -q --no-checkout . "$scratch/repo"
cd "$scratch/repo"
mkdir scripts
cp "$repo/scripts/semver-check.sh" scripts/
for t in congestion-v0.9.0 congestion-v0.10.0 congestion-v0.2.0 bbrlab-s2n-v0.1.0 congestion-vnext; do
  git tag "$t"
done
out=$(bash scripts/semver-check.sh --plan)
fail() { echo "semver_check_test: $1"; echo "$out"; exit 1; }
grep -qx "semver-check: congestion: against congestion-v0.10.0" <<< "$out" || fail "congestion's newest release is 0.10.0"
grep -qx "semver-check: bbrlab-s2n: against bbrlab-s2n-v0.1.0" <<< "$out" || fail "bbrlab-s2n has one release"
for c in bbrlab-adapter bbrlab-noq bbrlab-quinn; do
  grep -qx "semver-check: $c: no release tag ($c-vX.Y.Z) yet, nothing to check against" <<< "$out" || fail "$c has no release"
done
[ "$(wc -l <<< "$out")" = 5 ] || fail "one line per published crate"
if bash scripts/semver-check.sh --bogus > /dev/null 2>&1; then fail "an unknown argument is refused"; fi
echo "semver_check_test: ok"
