# Sourced by .ci/run and scripts/test.sh: `phase NAME COMMAND...` runs
# COMMAND, prints how long it took and returns COMMAND's exit status, so a slow CI run says where its
# time went. The times are also appended to $PHASE_LOG when it is set
# (one "seconds<TAB>name" line per phase) for a summary at the end.
phase() {
  local name="$1"
  shift
  local start
  start=$(date +%s)
  echo "== phase: $name" >&2
  local rc=0
  "$@" || rc=$?
  local took=$(($(date +%s) - start))
  if [ "$rc" = 0 ]; then
    echo "== phase: $name took ${took} s" >&2
  else
    echo "== phase: $name FAILED (exit status $rc) after ${took} s" >&2
  fi
  if [ -n "${PHASE_LOG:-}" ]; then
    printf '%s\t%s\n' "$took" "$name" >>"$PHASE_LOG"
  fi
  # The command's own status: a caller without `set -e` (the background
  # root tests' shell) must see a failure, not the status of the printf.
  return "$rc"
}

# Starts the log for phase_summary, unless a script that called this one
# keeps it (PHASE_START set): sets PHASE_LOG (a temporary file unless given,
# e.g. `PHASE_LOG=phases.tsv bash .ci/run`) and PHASE_START. Returns 1 when
# the log is the caller's.
phase_log_start() {
  [ -z "${PHASE_START:-}" ] || return 1
  PHASE_LOG="${PHASE_LOG:-$(mktemp)}"
  PHASE_START=$(date +%s)
  export PHASE_LOG PHASE_START
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
