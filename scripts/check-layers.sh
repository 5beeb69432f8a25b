#!/usr/bin/env bash
# The layering docs/src/parts.md promises, checked from cargo's own
# dependency graph (issues 21 and 32):
# - the Python package stands on scenario + runner + claims only: its normal
#   dependencies name none of the kernel, emulator, transport, testbed or CLI
#   crates;
# - the binary's default build (what a fresh machine compiles) has no BPF
#   toolchain dependency: libbpf-sys comes only with `--features kernel`;
# - congestion has no dependencies at all;
# - the binary only parses, dispatches and prints: crates/bbrlab/src holds
#   at most 3,500 lines, and no command module (src/cmd/*.rs) uses another
#   (shared code goes down into a library crate);
# - no import cycle between the top-level modules of any crate
#   (scripts/module_cycles.py);
# - no TLS or crypto library enters the binary or the Python package: the
#   QUIC stacks' controllers come from s2n-quic-core without its default
#   features and quinn-proto without rustls/ring (quic-controllers).
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
deps() { cargo tree -q -e normal --prefix none "$@" | sed 's/ .*//' | sort -u; }

bad=$(deps -p bbrlab-py | grep -xE 'kernel-cc|libbpf-sys|libbpf-rs|linkem|transport|tcp-probe|testbed|clap|indicatif|bbrlab' || true)
if [ -n "$bad" ]; then
  echo "check-layers: bbrlab-py depends on: $(echo $bad)" >&2; fail=1
fi
bad=$(deps -p bbrlab | grep -xE 'kernel-cc|libbpf-sys|libbpf-rs' || true)
if [ -n "$bad" ]; then
  echo "check-layers: bbrlab's default build depends on: $(echo $bad) (they belong to --features kernel)" >&2; fail=1
fi
if ! deps -p bbrlab --features kernel | grep -qx 'kernel-cc'; then
  echo "check-layers: bbrlab --features kernel does not build kernel-cc" >&2; fail=1
fi
bad=$( { deps -p bbrlab; deps -p bbrlab-py; } | grep -xE 'aws-lc-rs|aws-lc-sys|aws-lc-fips-sys|ring|rustls|s2n-tls|s2n-tls-sys|s2n-quic-tls|s2n-quic-crypto|openssl|openssl-sys' | sort -u || true)
if [ -n "$bad" ]; then
  echo "check-layers: bbrlab or bbrlab-py links a TLS/crypto library: $(echo $bad)" >&2; fail=1
fi
bad=$(deps -p scenario | grep -xE 'quic-controllers|s2n-quic-core|quinn-proto' || true)
if [ -n "$bad" ]; then
  echo "check-layers: the scenario parser links a QUIC stack: $(echo $bad) (it knows their controllers by name, stack-names; the runner builds them)" >&2; fail=1
fi
others=$( { deps -p congestion; deps -p stack-names; } | grep -vxE 'congestion|stack-names' || true)
if [ -n "$others" ]; then
  echo "check-layers: congestion and stack-names must have no dependencies, have: $(echo $others)" >&2; fail=1
fi
lines=$(cat $(find crates/bbrlab/src -name '*.rs') | wc -l)
if [ "$lines" -gt 3500 ]; then
  echo "check-layers: crates/bbrlab/src has $lines lines, more than 3,500: move library code into a crate below the binary (testbed, claims, runner...)" >&2; fail=1
fi
for f in crates/bbrlab/src/cmd/*.rs; do
  [ "$(basename "$f")" = mod.rs ] && continue
  if grep -nE '(crate::cmd::|super::[a-z_]+::|use super::\{?[a-z_]+)' "$f" | grep -v 'use super::\*' >&2; then
    echo "check-layers: $f uses another command's module (above); move what they share into a library" >&2; fail=1
  fi
done
python3 scripts/module_cycles.py --selftest || fail=1
python3 scripts/module_cycles.py || fail=1
[ "$fail" = 0 ] && echo "check-layers: ok"
exit "$fail"
