#!/usr/bin/env bash
# Now `bbrlab kernel jitter-sweep` (CSV, provenance, progress; see its --help and docs/src/kernel.md, "Seed 001 on Linux TCP").
exec "${BBRLAB:-bbrlab}" kernel jitter-sweep "$@"
