#!/usr/bin/env bash
# Chaos run: a cluster of real calderad processes on this machine (node-1 the coordinator), a
# seeded stream of gang jobs and a seeded schedule of node faults (kill -9 and restart of a worker
# or of the coordinator, SIGSTOP/SIGCONT of a worker shorter and longer than the heartbeat
# timeout), then every job waited for and the invariants checked (tests/chaos/chaos.cpp).
# Prints the faults as they happen, figures, notes and violations; the last line is
# `chaos: F faults, J jobs, V violations`, and the exit status is 1 when V > 0.
# Usage: scripts/chaos.sh [--seed S=1] [--minutes M=2] [--nodes N=3] [driver options...]
#   driver options: --drain-seconds S (wait for the jobs to end, default 240), --keep (keep the
#   work directory; it is kept anyway when there are violations), --work-dir DIR, --faults
#   KIND,... (some of kill-worker,stop-long,stop-short,kill-coordinator), --dry-run (the plan).
# CTest runs a short form of it: ctest -L chaos.
set -euo pipefail
cd "$(dirname "$0")/.."

seed=1 minutes=2 nodes=3
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seed | --minutes | --nodes)
      [ $# -ge 2 ] || { echo "chaos.sh: $1 needs a value" >&2; exit 2; }
      declare "${1#--}=$2"
      shift 2
      ;;
    --seed=* | --minutes=* | --nodes=*)
      opt="${1%%=*}"
      declare "${opt#--}=${1#*=}"
      shift
      ;;
    -h | --help)
      sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      extra+=("$1")
      shift
      ;;
  esac
done

# The Debug build of scripts/build.sh, only what the driver needs (calderad, the CLI, the shim).
echo "chaos.sh: building caldera-chaos into build/" >&2
if ! log=$(scripts/build.sh --target caldera-chaos 2>&1); then
  echo "$log" >&2
  exit 1
fi
exec build/tests/chaos/caldera-chaos --seed "$seed" --minutes "$minutes" --nodes "$nodes" \
  ${extra[@]+"${extra[@]}"}
