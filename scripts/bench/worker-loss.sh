#!/usr/bin/env bash
# Worker-loss recovery: how long after a worker fault a job whose pod ran there runs again on
# another node, on a 3-node cluster of real calderad processes on this machine (node-1 the
# coordinator, holding no pods; node-2 and node-3 one pod's room each). Faults: kill (kill -9 of
# the worker's calderad; its pod's supervisor runs on) and stop (SIGSTOP of it, as a hang or a
# partition). The replacement may start only once the worker's lease is surely over (leaseTimeout
# + 1% + 200 ms + the 1 s stop of a pod that sets no grace period), counted from the last heartbeat the coordinator took in: that
# bound is printed beside the figures. Each run also says whether the first copy of the pod was
# still alive when its replacement ran (old_alive=1: two copies at once). A fresh cluster each
# run; the median of RUNS per case. With BASELINE_REV, that revision's calderad runs the same
# cases first (a revision without leases ignores leaseTimeout, with a warning).
# Usage: scripts/bench/worker-loss.sh [RUNS=3] [LEASES="5s 3s"] [FAULTS="kill stop"] [BASELINE_REV]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-3}"
leases="${2:-5s 3s}"
faults="${3:-kill stop}"
scripts/install-deps.sh

source scripts/bench/lib.sh
build_release . build-release calderad caldera-shim caldera
setup_variants "${4:-}"
cli=build-release/client/caldera

work=$(mktemp -d /tmp/caldera-worker-loss-XXXXXX)
# Only the calderad processes this script started are signalled (their pids, noted as started).
pids=()
stop_all() {
  [ ${#pids[@]} -gt 0 ] && kill -CONT "${pids[@]}" 2>/dev/null
  [ ${#pids[@]} -gt 0 ] && kill -9 "${pids[@]}" 2>/dev/null
  pids=()
}
trap 'stop_all; sleep 0.5; rm -rf "$work"' EXIT

# Writes a config into $1 with lease $2 and notes node-1's client port in $1/port.
write_config() {
  local dir="$1" lease="$2" cfg="$1/cluster.yaml"
  printf 'cluster: {name: loss, coordinator: node-1, heartbeatInterval: 500ms, heartbeatTimeout: 2s, leaseTimeout: %s}\nnodes:\n' \
    "$lease" >"$cfg"
  for i in 1 2 3; do
    local cp kp cpu=1
    cp=$(free_port)
    kp=$(free_port)
    [ "$i" != 1 ] && cpu=2
    printf '  - {name: node-%s, host: 127.0.0.1, clientPort: %s, clusterPort: %s, dataDir: %s/node-%s, resources: {cpu: %s, memory: 4Gi, pods: 10}}\n' \
      "$i" "$cp" "$kp" "$dir" "$i" "$cpu" >>"$cfg"
    if [ "$i" = 1 ]; then echo "$cp" >"$dir/port"; fi
  done
}

job() {  # name, pid file: one pod of 2 cpus (a worker's all) that notes its pid and sleeps, run
  # again when evicted
  printf 'apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: %s}\nspec:\n  policies: [{event: PodEvicted, action: RestartJob}]\n  tasks:\n    - name: w\n      replicas: 1\n      template:\n        spec:\n          containers: [{name: main, command: [sh, -c, "echo $$ >> %s; exec sleep 600"], resources: {requests: {cpu: 2}}}]\n' "$1" "$2"
}

# The node of job $1's Running pod, "" if none.
running_node() {
  "$cli" --server "$server" get pods -o json 2>/dev/null | python3 -c '
import json, sys
name = sys.argv[1]
for p in json.load(sys.stdin).get("items", []):
    if p["metadata"].get("labels", {}).get("volcano.sh/job-name") == name and \
       p.get("status", {}).get("phase") == "Running":
        print(p.get("spec", {}).get("nodeName", ""))
' "$1" || true
}

wait_for() {  # seconds, command...: polls every 50 ms
  local until=$(($(date +%s%N) + $1 * 1000000000))
  shift
  while [ "$(date +%s%N)" -lt "$until" ]; do
    "$@" && return 0
    sleep 0.05
  done
  return 1
}

ready3() { [ "$("$cli" --server "$server" get nodes 2>/dev/null | grep -c ' Ready ')" = 3 ]; }
placed() { [ -n "$(running_node "$1")" ]; }
moved() { local n; n=$(running_node victim); [ -n "$n" ] && [ "$n" != "$victim_node" ]; }

declare -A results=() olds=()
for variant in "${variants[@]}"; do
  daemon=${calderad[$variant]}
  for lease in $leases; do
    lease_s=$(python3 -c "import sys; v=sys.argv[1]; print(float(v[:-2])/1000 if v.endswith('ms') else float(v[:-1]))" "$lease")
    bound=$(python3 -c "import sys; l=float(sys.argv[1]); print(f'{l + l*0.01 + 0.2 + 1.0:.2f}')" "$lease_s")
    for fault in $faults; do
      key="$variant-$lease-$fault"
      for r in $(seq "$runs"); do
        dir="$work/$key-$r"
        mkdir -p "$dir"
        write_config "$dir" "$lease"
        declare -A pid_of=()
        for i in 1 2 3; do
          "$daemon" --config "$dir/cluster.yaml" --node "node-$i" >"$dir/node-$i.log" 2>&1 &
          pids+=($!)
          pid_of[node-$i]=$!
          disown "$!"  # its kill -9 is the point, not a job to report
        done
        server="127.0.0.1:$(cat "$dir/port")"
        wait_for 20 ready3
        job filler "$dir/filler.pids" | "$cli" --server "$server" submit -f - >/dev/null
        wait_for 20 placed filler
        job victim "$dir/victim.pids" | "$cli" --server "$server" submit -f - >/dev/null
        wait_for 20 placed victim
        victim_node=$(running_node victim)
        "$cli" --server "$server" delete job filler >/dev/null
        # Room for the replacement: the filler's pod is gone from the other worker.
        wait_for 20 bash -c "! $cli --server $server get pods 2>/dev/null | grep -q filler"
        sleep 1  # a few heartbeats: the lease runs from the latest
        t0=$(date +%s%N)
        if [ "$fault" = kill ]; then kill -9 "${pid_of[$victim_node]}"; else kill -STOP "${pid_of[$victim_node]}"; fi
        old_alive=nan
        if wait_for 60 moved; then
          s=$(python3 -c "import sys; print(f'{(int(sys.argv[2]) - int(sys.argv[1])) / 1e9:.2f}')" "$t0" "$(date +%s%N)")
          # The first copy's process as the replacement runs (a zombie, left by a supervisor that
          # cannot reap it yet, is dead).
          first=$(head -1 "$dir/victim.pids")
          old_alive=0
          if [ -r "/proc/$first/stat" ] && [ "$(awk '{print $3}' "/proc/$first/stat")" != Z ]; then
            old_alive=1
          fi
        else
          s=nan
        fi
        echo "variant=$variant lease=$lease fault=$fault run=$r recovery_s=$s old_alive=$old_alive" \
          "lease_over_bound_s=$bound"
        results[$key]+="$s "
        olds[$key]+="$old_alive"
        stop_all
        unset pid_of
        sleep 0.5
      done
      # shellcheck disable=SC2086 # space-separated numbers
      echo "median variant=$variant lease=$lease fault=$fault runs=$runs" \
        "recovery_s=$(med ${results[$key]})" \
        "runs_with_two_copies=$(tr -cd 1 <<<"${olds[$key]}" | wc -c)" \
        "lease_over_bound_s=$bound"
    done
  done
done
