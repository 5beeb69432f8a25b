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

# Starts a log for phase_summary, unless one is already being kept (by the
# script that called this one): sets PHASE_LOG and PHASE_START.
phase_log_start() {
  if [ -z "${PHASE_LOG:-}" ]; then
    PHASE_LOG="$(mktemp)"
    PHASE_START=$(date +%s)
    export PHASE_LOG PHASE_START
    return 0
  fi
  return 1
}

# Prints the phases recorded in $PHASE_LOG, slowest first, and the wall
# clock since phase_log_start. Phases that overlapped (the root tests run
# beside the others in scripts/test.sh) add up to more than that.
phase_summary() {
  [ -n "${PHASE_LOG:-}" ] && [ -s "$PHASE_LOG" ] || return 0
  echo "== phases, slowest first (seconds):" >&2
  sort -rn "$PHASE_LOG" | sed 's/^/   /' >&2
  if [ -n "${PHASE_START:-}" ]; then
    printf '   %d\twall clock\n' "$(($(date +%s) - PHASE_START))" >&2
  fi
}
