#!/usr/bin/env bash
# The published crates' API against their last release: for each of
# congestion, bbrlab-adapter, bbrlab-s2n, bbrlab-noq and bbrlab-quinn,
# `cargo semver-checks` against the newest tag `<crate>-v<version>` (each
# release is tagged so; crates/congestion/CHANGELOG.md). A change that
# breaks a caller without the version bump semver asks for fails. A crate
# with no such tag has had no release, so nothing it does can break one:
# it is reported, not checked.
#
#   bash scripts/semver-check.sh          check (CI runs this)
#   bash scripts/semver-check.sh --plan   print each crate's baseline; check nothing
#
# cargo-semver-checks (a pinned version) is installed on first use, only
# when some crate has a release to check against: its build takes about
# 6 minutes of CPU.
set -euo pipefail
cd "$(dirname "$0")/.."

CRATES=(congestion bbrlab-adapter bbrlab-s2n bbrlab-noq bbrlab-quinn)
SEMVER_CHECKS_VERSION=0.51.0

plan=0
case "${1:-}" in
  "") ;;
  --plan) plan=1 ;;
  -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
  *) echo "semver-check: unknown argument '$1' (allowed: --plan, --help)" >&2; exit 2 ;;
esac

# The newest release tag of a crate, by version order (0.10 after 0.9), or
# nothing.
baseline() {
  git tag --list "$1-v[0-9]*" --sort=-v:refname | head -n 1
}

checks=()
for crate in "${CRATES[@]}"; do
  tag=$(baseline "$crate")
  if [ -z "$tag" ]; then
    echo "semver-check: $crate: no release tag ($crate-vX.Y.Z) yet, nothing to check against"
  else
    echo "semver-check: $crate: against $tag"
    checks+=("$crate=$tag")
  fi
done
[ "$plan" = 1 ] && exit 0
[ "${#checks[@]}" = 0 ] && exit 0

case "$(cargo semver-checks --version 2>/dev/null || true)" in
  *"$SEMVER_CHECKS_VERSION"*) ;;
  *) echo "semver-check: installing cargo-semver-checks $SEMVER_CHECKS_VERSION"
     cargo install -q cargo-semver-checks --version "$SEMVER_CHECKS_VERSION" --locked ;;
esac
status=0
for c in "${checks[@]}"; do
  crate=${c%%=*}
  tag=${c#*=}
  cargo semver-checks check-release -p "$crate" --baseline-rev "$tag" || status=1
done
exit $status
