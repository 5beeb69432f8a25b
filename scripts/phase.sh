# Sourced by .ci/run and scripts/test.sh: `phase NAME COMMAND...` runs
# COMMAND and prints how long it took, so a slow CI run says where its
# time went. The times are also appended to $PHASE_LOG when it is set
# (one "seconds<TAB>name" line per phase) for a summary at the end.
phase() {
  local name="$1"
  shift
  local start
  start=$(date +%s)
  echo "== phase: $name" >&2
  "$@"
  local took=$(($(date +%s) - start))
  echo "== phase: $name took ${took} s" >&2
  if [ -n "${PHASE_LOG:-}" ]; then
    printf '%s\t%s\n' "$took" "$name" >>"$PHASE_LOG"
  fi
}

# Prints the phases recorded in $PHASE_LOG, slowest first, with the total.
phase_summary() {
  [ -n "${PHASE_LOG:-}" ] && [ -s "$PHASE_LOG" ] || return 0
  echo "== phases, slowest first (seconds):" >&2
  sort -rn "$PHASE_LOG" | sed 's/^/   /' >&2
  awk -F'\t' '{s += $1} END {printf "   %d\ttotal\n", s}' "$PHASE_LOG" >&2
}
