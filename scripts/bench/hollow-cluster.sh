#!/usr/bin/env bash
# The gang scheduler at the scale of many nodes on this machine: a coordinator (node-1, with one
# pod slot: it takes next to nothing) and one calderad hosting NODES hollow nodes (a cluster config entry with a
# count; each has 8 cpus and 110 pod slots, and runs its pods as simulated ones). GANGS gangs of
# PODS simulated pods are sent to the coordinator; prints pods bound and run to Completed per
# second, the gang commit latency (prepare on every node to bound) and how long the hollow nodes
# took to register. A fresh cluster each run; every run and the medians.
# CALDERAD_BIN runs another calderad (say, an earlier revision's Release build) for both
# processes, with this tree's client: alternate the two for a paired comparison.
# Usage: [CALDERAD_BIN=path] scripts/bench/hollow-cluster.sh [RUNS=3] [NODES=1000] [GANGS=1000] [PODS=8]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-3}"
nodes="${2:-1000}"
gangs="${3:-1000}"
pods="${4:-8}"
scripts/install-deps.sh

source scripts/bench/lib.sh
build_release . build-release calderad caldera caldera-shim caldera-bench-submit
daemon=${CALDERAD_BIN:-build-release/node/calderad}
cli=build-release/client/caldera

work=$(mktemp -d /tmp/caldera-hollow-bench-XXXXXX)
pids=()
stop_all() { [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null; pids=(); }
trap 'stop_all; rm -rf "$work"' EXIT


rates=() pod_rates=() c50=() c99=() reg=()
for r in $(seq "$runs"); do
  dir="$work/run-$r"
  mkdir -p "$dir"
  port=$(free_port)
  cat >"$dir/cluster.yaml" <<YAML
cluster: {name: hollow-bench, coordinator: node-1}
nodes:
  - {name: node-1, host: 127.0.0.1, clientPort: $port, clusterPort: $(free_port), dataDir: $dir/node-1, resources: {cpu: 1, pods: 1}}
  - {name: hollow, host: 127.0.0.1, clientPort: $(free_port), clusterPort: $(free_port), dataDir: $dir/hollow, count: $nodes, resources: {cpu: 8, memory: 32Gi, pods: 110}}
YAML
  started=$(date +%s.%N)
  "$daemon" --config "$dir/cluster.yaml" --node node-1 >"$dir/node-1.log" 2>&1 &
  pids+=($!)
  "$daemon" --config "$dir/cluster.yaml" --node hollow >"$dir/hollow.log" 2>&1 &
  pids+=($!)
  ready=0
  for _ in $(seq 1200); do
    ready=$("$cli" --server "127.0.0.1:$port" get nodes 2>/dev/null | grep -c ' Ready ' || true)
    [ "$ready" = "$((nodes + 1))" ] && break
    sleep 0.1
  done
  if [ "$ready" != "$((nodes + 1))" ]; then
    echo "only $ready of $((nodes + 1)) nodes Ready" >&2
    exit 1
  fi
  registered_s=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}')
  out=$(build-release/scripts/bench/caldera-bench-submit --server "127.0.0.1:$port" \
    --jobs "$gangs" --kind sim --replicas "$pods" --prefix "h$r")
  stop_all || true
  sleep 1
  summary=$(grep -h 'scheduler gangs_committed' "$dir/node-1.log" | tail -1 || true)
  rate=$(field completed_per_s "$out")
  pod_rate=$(awk -v c="$rate" -v p="$pods" 'BEGIN {printf "%.0f", c * p}')
  p50=$(field commit_ms_p50 "$summary")
  p99=$(field commit_ms_p99 "$summary")
  echo "run=$r nodes=$nodes gangs=$gangs pods_per_gang=$pods registered_s=$registered_s" \
    "${out#kind=* } pods_per_s=$pod_rate commit_ms_p50=$p50 commit_ms_p99=$p99"
  rates+=("$rate") pod_rates+=("$pod_rate") c50+=("$p50") c99+=("$p99") reg+=("$registered_s")
done
echo "median nodes=$nodes gangs=$gangs pods_per_gang=$pods runs=$runs" \
  "gangs_completed_per_s=$(med "${rates[@]}") pods_per_s=$(med "${pod_rates[@]}")" \
  "commit_ms_p50=$(med "${c50[@]}") commit_ms_p99=$(med "${c99[@]}")" \
  "registered_s=$(med "${reg[@]}")"
