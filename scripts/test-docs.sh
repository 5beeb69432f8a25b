#!/usr/bin/env bash
# The documentation's tests (part of scripts/test.sh): builds the book
# (docs/, mdBook) and checks every link, then runs the code blocks of
# README.md and the book. Exits non-zero on any failure.
#
# The convention, for every fenced block in README.md and docs/**/*.md:
#
# - The info string names the language: sh, bash or console (shell),
#   python, rust, toml, or text (output, listings, diagrams: not run).
#   A block without one fails.
# - An HTML comment on the line just before the opening fence says how it
#   is tested, when it is not simply run:
#
#     <!-- not run: REASON -->
#         Never run. The reason is required: what it needs that a test
#         cannot have (root and 20 minutes, a Dask scheduler, your own
#         venv...) and, where there is one, the test that covers it.
#     <!-- run: as-root needs=ip,iperf3 timeout=180 -->
#         Shell blocks only, each option optional: run only as root, only
#         when these commands exist (otherwise printed as SKIP with the
#         reason, and not a failure), with this time limit in seconds
#         (default 300).
#     <!-- run: output=next -->
#         And its standard output (not its standard error) must be the
#         next fenced block, a `text` block, line for line (trailing
#         spaces aside): for a pasted output that is the same on every
#         machine, so a change that moves it cannot leave it stale.
#
# - Shell blocks are run here, in order, one scratch directory per
#   Markdown file (target/doc-tests/<file>/, whose scenarios/, docs/,
#   target/, crates/ ... link to the repository's), with bash -euo
#   pipefail and a time limit each. `cargo run --release -p bbrlab --` in a
#   block finds the workspace above the scratch directory and reuses the
#   release build made below. A console block runs its `$ ` lines.
# - Python blocks are run each on its own by
#   crates/bbrlab-py/tests/test_doc_examples.py (scripts/test-python.sh,
#   in target/venv), in a scratch directory like the shell blocks'.
# - TOML blocks are parsed (an mdBook `{{#include FILE}}` in one is read).
# - Rust blocks in the book are compiled and run by `mdbook test`; one
#   marked `ignore` needs a `not run` comment naming the doctest that
#   covers the same code (the book's blocks would need the workspace's
#   crates, which mdbook test does not link).
# - Links: every relative link and image in README.md and docs/**/*.md must
#   name an existing file and, with #anchor, an existing heading (GitHub's
#   and mdBook's rule); in the built book every relative href and src must
#   resolve, with its anchor. URLs to other sites are not fetched. A
#   repository path named in a code span or a `not run` reason
#   (`crates/x/tests/y.rs`) must exist, so moving a file cannot leave the
#   docs pointing at nothing.
#
# `python3 scripts/docblocks.py list .` lists every block and how it is
# tested. The checks and the runner are scripts/docblocks.py (stdlib only).
set -uo pipefail
cd "$(dirname "$0")/.."

failed=()
step() {
  local name=$1
  shift
  echo "docs: == $name"
  if ! "$@"; then
    echo "docs: FAILED: $name" >&2
    failed+=("$name")
    return 1
  fi
}

bash scripts/setup-docs.sh || exit 1

step "mdbook build" mdbook build docs
step "mdbook test (the book's Rust blocks)" mdbook test docs
step "blocks and links" python3 scripts/docblocks.py check . target/book
# The shell blocks call `cargo run --release -p bbrlab`; build it once
# here, outside their time limits.
if step "release build of bbrlab" cargo build --release -q -p bbrlab; then
  step "shell blocks" python3 scripts/docblocks.py run-shell . target/doc-tests
else
  echo "docs: the shell blocks were not run: bbrlab does not build" >&2
fi

if [ "${#failed[@]}" -gt 0 ]; then
  echo "docs: failed: ${failed[*]}" >&2
  exit 1
fi
echo "docs: ok (the Python blocks run in scripts/test-python.sh)"
