#!/usr/bin/env bash
# Screenshots a reproduction report (bbrlab reproduce -o REPORT_DIR) in
# headless Chromium, so the figures can be checked by eye as a reader sees
# them (SVGs set in the browser's fonts, legends, tick labels).
#
#   scripts/screenshot-report.sh REPORT_DIR OUT.png [WIDTH] [HEIGHT]
#
# WIDTH defaults to 1280; HEIGHT to 12000 (the whole report, long). Needs
# Debian's `chromium` (scripts/setup.sh installs it); without it this says
# so and exits 0 without a screenshot, so callers can skip cleanly.
set -euo pipefail

if [ "$#" -lt 2 ]; then
  echo "usage: $0 REPORT_DIR OUT.png [WIDTH] [HEIGHT]" >&2
  exit 2
fi
report=$1
out=$2
width=${3:-1280}
height=${4:-12000}

if [ ! -f "$report/index.html" ]; then
  echo "screenshot-report: no $report/index.html (run bbrlab reproduce -o $report)" >&2
  exit 1
fi
browser=""
for b in chromium chromium-browser; do
  if command -v "$b" >/dev/null 2>&1; then
    browser=$b
    break
  fi
done
if [ -z "$browser" ]; then
  echo "screenshot-report: skipped: chromium is not installed (bash scripts/setup.sh installs it)"
  exit 0
fi

page="file://$(cd "$report" && pwd)/index.html"
out_abs="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
# A throwaway profile, so a running browser or a stale lock cannot interfere.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$profile" --window-size="$width,$height" \
  --screenshot="$out_abs" "$page" >/dev/null 2>&1
if [ ! -s "$out_abs" ]; then
  echo "screenshot-report: chromium wrote no screenshot" >&2
  exit 1
fi
echo "screenshot-report: wrote $out_abs (${width}x${height}, $page)"
