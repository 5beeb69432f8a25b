#!/usr/bin/env bash
# Installs what scripts/test-docs.sh needs to build the book (docs/): mdBook
# at the pinned version, from crates.io, into cargo's bin directory. Called by
# scripts/setup.sh; idempotent: nothing is built when `mdbook --version`
# already names the pinned version.
#
# Only the `search` feature is built (no `serve`/`watch`: the book is built,
# not served), which roughly halves the build (about 2-3 minutes on 2 cores).
# For a live preview while writing, install mdbook with its default features
# and run `mdbook serve docs`.
#
# The links are checked by scripts/docblocks.py (Python, stdlib only),
# not by mdbook-linkcheck: its last release (0.7.7) supports mdbook ^0.4 only
# and builds a vendored OpenSSL, and it would not check README.md anyway.
set -euo pipefail

MDBOOK_VERSION=0.5.4

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup-docs: cargo not found; install Rust (https://rustup.rs) first" >&2
  exit 1
fi
have=$(mdbook --version 2>/dev/null || true)
if [ "$have" != "mdbook v$MDBOOK_VERSION" ]; then
  echo "setup-docs: installing mdbook $MDBOOK_VERSION (found: ${have:-none})"
  cargo install mdbook --locked --version "$MDBOOK_VERSION" \
    --no-default-features --features search
fi
