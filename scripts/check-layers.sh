#!/usr/bin/env bash
# The layering docs/src/parts.md promises, checked from cargo's own
# dependency graph (issues 21 and 32):
# - the Python package stands on scenario + runner + claims only: its normal
#   dependencies name none of the kernel, emulator, transport, testbed or CLI
#   crates;
# - the binary's default build (what a fresh machine compiles) has no BPF
#   toolchain dependency: libbpf-sys comes only with `--features kernel`;
# - congestion has no dependencies at all;
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
others=$(deps -p congestion | grep -vx congestion || true)
if [ -n "$others" ]; then
  echo "check-layers: congestion must have no dependencies, has: $(echo $others)" >&2; fail=1
fi
[ "$fail" = 0 ] && echo "check-layers: ok"
exit "$fail"
