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
#
# Cargo takes a registry crate for immutable, and the packaged crates are
# registry crates here (version 0.1.0 until a release): it reuses a copy
# an earlier run unpacked into $CARGO_HOME/registry/src/-HASH/ (the hash
# names the checkout's target/package, and CI's clone is always in one
# place) and the library an earlier run compiled from it, whatever the
# sources are now. A run then verified the adapters against an old
# `congestion` (2026-12-06: "no `ConfigError` in the root" for an API
# added since). So the five crates' unpacked copies are removed first
# (crates.io's own, `index.crates.io-*`, are left alone) and the
# verification builds in a target directory of its own, made afresh.
set -euo pipefail
cd "$(dirname "$0")/.."
for c in congestion bbrlab-adapter bbrlab-s2n bbrlab-noq bbrlab-quinn; do
  rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/"$c"-[0-9]*
done
target=target/publish-check
rm -rf "$target"
CARGO_TARGET_DIR=$target exec cargo publish --dry-run --allow-dirty --locked \
  -p congestion -p bbrlab-adapter -p bbrlab-s2n -p bbrlab-noq -p bbrlab-quinn
