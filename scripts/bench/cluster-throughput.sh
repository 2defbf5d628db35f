#!/usr/bin/env bash
# Jobs per second to Completed on a 3-node cluster of real calderad processes on this machine
# (node-1 the coordinator), for N single-task simulated jobs, N /bin/true jobs and N gangs of 3
# simulated pods (kind gang; gang8 for gangs of 8), sent to the coordinator; with the same runs on a 1-node cluster of the same
# binary as the baseline. Also the gang commit latency (prepare on every node involved to all
# bound), median and p99, from the coordinator's scheduler summary at exit.
# Prints every run and the medians. A fresh cluster each run.
# Usage: scripts/bench/cluster-throughput.sh [N=1000] [RUNS=3] [KINDS="sim true gang"]
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-1000}"
runs="${2:-3}"
kinds="${3:-sim true gang}"
scripts/install-deps.sh

source scripts/bench/lib.sh
build_release . build-release calderad caldera-shim caldera-bench-submit
calderad=build-release/node/calderad

work=$(mktemp -d /tmp/caldera-cluster-bench-XXXXXX)
# Only the calderad processes this script started are signalled (their pids, noted as started).
pids=()
stop_all() { [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null; pids=(); }
trap 'stop_all; rm -rf "$work"' EXIT


# Writes a config of $2 nodes into $1 (node-1 the coordinator; room for any benchmark's pods) and
# notes node-1's client port in $1/port.
write_config() {
  local dir="$1" count="$2" cfg="$1/cluster.yaml"
  printf 'cluster: {name: bench, coordinator: node-1}\nnodes:\n' >"$cfg"
  for i in $(seq "$count"); do
    local cp kp
    cp=$(free_port)
    kp=$(free_port)
    printf '  - {name: node-%s, host: 127.0.0.1, clientPort: %s, clusterPort: %s, dataDir: %s/node-%s, resources: {cpu: 1000, memory: 1000Gi, pods: 100000}}\n' \
      "$i" "$cp" "$kp" "$dir" "$i" >>"$cfg"
    if [ "$i" = 1 ]; then echo "$cp" >"$dir/port"; fi
  done
}

# Starts a cluster of $2 nodes in $1 and waits until every node is Ready.
start() {
  local dir="$1" count="$2"
  write_config "$dir" "$count"
  for i in $(seq "$count"); do
    "$calderad" --config "$dir/cluster.yaml" --node "node-$i" --log-level info \
      >"$dir/node-$i.log" 2>&1 &
    pids+=($!)
  done
  local port
  port=$(cat "$dir/port")
  for _ in $(seq 200); do
    [ "$(build-release/client/caldera --server "127.0.0.1:$port" get nodes 2>/dev/null |
      grep -c ' Ready ')" = "$count" ] && break
    sleep 0.05
  done
}

for kind in $kinds; do
  # gang: gangs of 3 simulated pods; gangN: of N.
  replicas=1
  if [[ "$kind" =~ ^gang([0-9]*)$ ]]; then replicas=${BASH_REMATCH[1]:-3}; fi
  declare -A comp=()
  commit50=() commit99=()
  for r in $(seq "$runs"); do
    for mode in single cluster; do
      dir="$work/$kind-$r-$mode"
      mkdir -p "$dir"
      nodes=3
      [ "$mode" = single ] && nodes=1
      start "$dir" "$nodes"
      bench_kind=$kind
      extra=()
      if [[ "$kind" =~ ^gang([0-9]*)$ ]]; then
        bench_kind=sim
        extra=(--replicas "$replicas")
      fi
      out=$(build-release/scripts/bench/caldera-bench-submit --server "127.0.0.1:$(cat "$dir/port")" \
        --jobs "$n" --kind "$bench_kind" --prefix "b$r" "${extra[@]}")
      started=("${pids[@]}")
      stop_all || true
      for p in "${started[@]}"; do
        for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
      done
      c=$(field completed_per_s "$out")
      comp[$mode]+="$c "
      line="$mode kind=$kind ${out#kind=* }"
      summary=$(grep -h 'scheduler gangs_committed' "$dir/node-1.log" | tail -1 || true)
      if [ -n "$summary" ]; then
        p50=$(field commit_ms_p50 "$summary")
        p99=$(field commit_ms_p99 "$summary")
        line+=" commit_ms_p50=$p50 commit_ms_p99=$p99"
        if [ "$mode" = cluster ]; then
          commit50+=("$p50")
          commit99+=("$p99")
        fi
      fi
      echo "$line"
    done
  done
  # shellcheck disable=SC2086 # space-separated numbers
  echo "median kind=$kind jobs=$n runs=$runs single_completed_per_s=$(med ${comp[single]})" \
    "cluster_completed_per_s=$(med ${comp[cluster]})" \
    "cluster_pods_per_s=$(awk -v c="$(med ${comp[cluster]})" -v r="$replicas" 'BEGIN {printf "%.0f", c * r}')" \
    "cluster_commit_ms_p50=$(med "${commit50[@]:-0}")" \
    "cluster_commit_ms_p99=$(med "${commit99[@]:-0}")"
  unset comp
done
