#!/usr/bin/env bash
# The new user's first steps, on a fresh machine: a clean Debian root with
# only build tools, Python and Rust (no scripts/setup.sh, nothing installed
# by hand), as ../shared/tools/fresh-machine makes one. Checks that
#   1. the README's main command builds and runs:
#        cargo run --release -p bbrlab -- reproduce
#      (with --quick here: the build is what a fresh machine breaks, and the
#      full run is the same code for longer), and writes the report;
#   2. the README's Python install and first example work in a fresh
#      virtual environment.
#
# Not part of scripts/test.sh: it needs root, the fresh-machine tool (not in
# this repository) and 10-20 minutes for a cold release build. Run it before
# changing dependencies, features, build scripts or the README's quick
# start, and before saying the main command works on a fresh machine:
#
#   sudo bash scripts/fresh-check.sh      # FRESH_MACHINE=/path/to/fresh-machine
#
# It tests the checkout's HEAD (commit first: fresh-machine clones HEAD);
# the steps themselves are scripts/first-steps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
fm=${FRESH_MACHINE:-../shared/tools/fresh-machine}
if [ ! -x "$fm" ]; then
  echo "fresh-check: $fm not found; set FRESH_MACHINE to the fresh-machine tool" >&2
  exit 2
fi
exec "$fm" -- bash scripts/first-steps.sh
