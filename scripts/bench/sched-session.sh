#!/usr/bin/env bash
# The gang scheduler's session on simulated (hollow) nodes, as a pure function without actors or
# I/O: 1,000 gangs of 8 pods on 1,000 nodes, in waves of 100 gangs decided by one session each,
# for both scorings. Prints every run and the medians of pods bound per second of session time
# and session time per pending pod group.
# Usage: scripts/bench/sched-session.sh [RUNS=3] [NODES=1000] [GANGS=1000] [PODS=8] [WAVE=100]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-3}"
nodes="${2:-1000}"
gangs="${3:-1000}"
pods="${4:-8}"
wave="${5:-100}"
scripts/install-deps.sh

source scripts/bench/lib.sh
build_release . build-release caldera-bench-sched

for scoring in default least-allocated binpack; do
  rate=() per_group=()
  for _ in $(seq "$runs"); do
    out=$(build-release/scripts/bench/caldera-bench-sched --nodes "$nodes" --gangs "$gangs" \
      --pods "$pods" --wave "$wave" --scoring "$scoring")
    echo "$out"
    rate+=("$(field pods_bound_per_s "$out")")
    per_group+=("$(field session_us_per_pending_group "$out")")
  done
  echo "median scoring=$scoring nodes=$nodes gangs=$gangs pods_per_gang=$pods wave=$wave" \
    "pods_bound_per_s=$(printf '%s\n' "${rate[@]}" | median)" \
    "session_us_per_pending_group=$(printf '%s\n' "${per_group[@]}" | median)"
done
