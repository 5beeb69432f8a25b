#!/usr/bin/env bash
# The library crates a transport takes from crates.io package and build on
# their own: `cargo publish --dry-run` packages `congestion` and the three
# adapters together (each adapter resolves the packaged `congestion`, not
# the workspace's), builds each from its package alone, and uploads
# nothing. It catches a file a crate includes from outside its directory,
# a path dependency without a version, and a manifest crates.io would
# refuse. Needs the crates.io index (the registry this project already
# builds from). --allow-dirty: CI runs on a clean clone, a developer
# before committing.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo publish --dry-run --allow-dirty --locked \
  -p congestion -p bbrlab-adapter -p bbrlab-s2n -p bbrlab-noq -p bbrlab-quinn
