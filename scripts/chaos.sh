#!/usr/bin/env bash
# Chaos run: a cluster of real calderad processes on this machine (node-1 the coordinator), a
# seeded stream of gang jobs and a seeded schedule of node faults, one at a time: kill -9 and
# restart of a worker (kill-worker), SIGSTOP/SIGCONT of a worker longer and shorter than the
# heartbeat timeout (stop-long, stop-short), a worker cut off from the coordinator for ~12 s by
# iptables DROP rules (partition-worker), kill -9 and restart of the coordinator
# (kill-coordinator), SIGSTOP of the coordinator for 4 s (pause-coordinator), and a wiped
# coordinator data dir (wipe-coordinator): with submissions held, `caldera admin backup` into the
# work dir, kill -9, its data dir emptied, a restart that must halt (get jobs refused, naming the
# lost store) for 5 s while no worker's pod is stopped or started, then a restart with
# --restore-from the backup. Then every job is waited for and the invariants checked
# (tests/chaos/chaos.cpp): no acknowledged job lost, every gang whole or not running, no pod
# alive on two nodes at once (the pods mark it themselves), no pod that ended Succeeded started
# again unless its job was restarted after an eviction, no pod that ended well reported Failed,
# a worker's pods ended with its lease, a 4 s coordinator pause stopped no pod; the restore after
# a wipe must lose nothing. Prints the faults as they happen, figures (the median worker-loss
# recovery among them), notes and violations; the last line is
# `chaos: F faults, J jobs, V violations`, and the exit status is 1 when V > 0.
# Usage: scripts/chaos.sh [--seed S=1] [--minutes M=2] [--nodes N=3] [driver options...]
#   driver options: --drain-seconds S (wait for the jobs to end, default 240), --keep (keep the
#   work directory; it is kept anyway when there are violations), --work-dir DIR, --faults
#   KIND,... (some of kill-worker,stop-long,stop-short,partition-worker,kill-coordinator,
#   pause-coordinator,wipe-coordinator; all by default), --dry-run (the plan).
#   partition-worker needs root, iptables (cgroup and connmark matches) and a cgroup v2 tree;
#   without them the driver skips it, saying why. Its rules live in the chain
#   CALDERA-CHAOS-<driver pid> (jumped to from OUTPUT) and its cgroups in caldera-chaos-<pid>:
#   the driver removes them as it ends, and this script's trap removes any left by a driver that
#   is gone (killed -9, say).
#   CALDERA_CHAOS_DRIVER=PATH runs that caldera-chaos instead of building build/.
# CTest runs short forms of it (ctest -L chaos): chaos.short, without partitions or wipes, and
# chaos.wipe, of wipes and worker kills.
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
      awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
      exit 0
      ;;
    *)
      extra+=("$1")
      shift
      ;;
  esac
done

driver="${CALDERA_CHAOS_DRIVER:-}"
# partition-worker needs iptables: installed when missing and we are root (Debian's package),
# else the driver skips partitions and says so.
if ! command -v iptables >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
  echo "chaos.sh: installing iptables (for partition-worker)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends iptables \
    >/dev/null 2>&1 || echo "chaos.sh: cannot install iptables" >&2
fi

if [ -z "$driver" ]; then
  # The Debug build of scripts/build.sh, only what the driver needs (calderad, the CLI, the shim).
  echo "chaos.sh: building caldera-chaos into build/" >&2
  if ! log=$(scripts/build.sh --target caldera-chaos 2>&1); then
    echo "$log" >&2
    exit 1
  fi
  driver=build/tests/chaos/caldera-chaos
fi

# The partition rules and cgroups of drivers that are gone: this run's once it ended, any other
# left behind (with the nodes still in them, orphans of a driver killed -9). A driver still
# running keeps its own.
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  if command -v iptables >/dev/null 2>&1; then
    iptables -w -S 2>/dev/null | sed -n 's/^-N \(CALDERA-CHAOS-\([0-9][0-9]*\)\)$/\1 \2/p' |
      while read -r chain pid; do
        kill -0 "$pid" 2>/dev/null && continue
        while iptables -w -D OUTPUT -j "$chain" 2>/dev/null; do :; done
        iptables -w -F "$chain" 2>/dev/null || true
        iptables -w -X "$chain" 2>/dev/null || true
      done
  fi
  local mnt self dir node pid
  mnt=$(awk '$0 ~ / - cgroup2 / && $4 == "/" { print $5; exit }' /proc/self/mountinfo)
  self=$(sed -n 's/^0:://p' /proc/self/cgroup)
  [ -n "$mnt" ] || return 0
  for dir in "$mnt${self%/}"/caldera-chaos-*; do
    [ -d "$dir" ] || continue
    pid=${dir##*-}
    kill -0 "$pid" 2>/dev/null && continue
    for node in "$dir"/node-*; do
      [ -d "$node" ] || continue
      echo 1 >"$node/cgroup.kill" 2>/dev/null || true
      for _ in 1 2 3 4 5 6 7 8 9 10; do
        [ -n "$(cat "$node/cgroup.procs" 2>/dev/null)" ] || break
        sleep 0.2
      done
      rmdir "$node" 2>/dev/null || true
    done
    rmdir "$dir" 2>/dev/null || true
  done
  return 0
}

# The driver runs as a child, so that the trap runs once it ended. An interrupt from the terminal
# reaches it as it reaches this script; a TERM is passed on. Either way it ends the run, cleaning
# up, and prints what it saw.
driver_pid=
# shellcheck disable=SC2317 # called by the TERM trap
forward() { [ -z "$driver_pid" ] || kill -TERM "$driver_pid" 2>/dev/null || true; }
trap forward TERM
trap : INT
trap cleanup EXIT
"$driver" --seed "$seed" --minutes "$minutes" --nodes "$nodes" ${extra[@]+"${extra[@]}"} &
driver_pid=$!
status=0
wait "$driver_pid" || status=$?
# A trapped signal ends `wait` early: wait for the driver itself.
while kill -0 "$driver_pid" 2>/dev/null; do
  status=0
  wait "$driver_pid" || status=$?
done
exit "$status"
