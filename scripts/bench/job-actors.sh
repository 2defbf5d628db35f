#!/usr/bin/env bash
# Resident memory per live and per finished job with N simulated jobs, job state transitions per
# second (abort then resume every job; storage on, fsync on), and calderad CPU per pod of one-pod
# jobs next to one job of up to 10,000 pods, and how much of that RocksDB's own flushes and
# compactions took (work earlier writes left behind). Prints every run and the medians.
# With a baseline revision (e.g. the commit before a change), every run measures that revision's
# calderad too, with the same benchmark client, so the two sets of figures come from one run.
# Usage: scripts/bench/job-actors.sh [N=10000] [RUNS=3] [BASELINE_REV]
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-10000}"
runs="${2:-3}"
baseline="${3:-}"
scripts/install-deps.sh

source scripts/bench/lib.sh
build_release . build-release calderad caldera-shim caldera caldera-bench-jobs
setup_variants "$baseline"

work=$(mktemp -d /tmp/caldera-bench-XXXXXX)
trap 'pkill -f "$work" 2>/dev/null || true; rm -rf "$work"' EXIT
field() { sed -E "s/.*$1=([-0-9.]+).*/\\1/" <<<"$2"; }

declare -A results  # "variant key" -> values, one line per run
keys=(bytes_per_live_job bytes_per_finished_job transitions_per_s cpu_us_per_pod_of_1pod_jobs
  cpu_us_per_pod_of_big_job rocksdb_bg_us_per_pod_of_1pod_jobs rocksdb_bg_us_per_pod_of_big_job)
for r in $(seq "$runs"); do
  for v in "${variants[@]}"; do
    dir="$work/run-$r-$v"
    mkdir -p "$dir"
    port=$(free_port); cport=$(free_port)
    # One node with room for every simulated pod (they ask only for a pod slot).
    cat >"$dir/cluster.yaml" <<YAML
cluster: {name: bench, coordinator: n1}
nodes:
  - {name: n1, host: 127.0.0.1, clusterPort: $cport, clientPort: $port, dataDir: $dir/data,
     resources: {cpu: 64, memory: 256Gi, pods: $((2 * n + 10100))}}
YAML
    "${calderad[$v]}" --config "$dir/cluster.yaml" --node n1 --log-level warn >"$dir/log" 2>&1 &
    pid=$!
    for _ in $(seq 200); do
      build-release/client/caldera --server "127.0.0.1:$port" get nodes >/dev/null 2>&1 && break
      sleep 0.05
    done
    out=$(build-release/scripts/bench/caldera-bench-jobs --server "127.0.0.1:$port" --jobs "$n" \
      --pid "$pid" --prefix "r$r")
    echo "$v $out"
    out=$(sed -E 's/cpu_us_per_pod_of_[0-9]+pod_job=/cpu_us_per_pod_of_big_job=/' <<<"$out")
    for k in "${keys[@]}"; do results["$v $k"]+="$(field "$k" "$out")"$'\n'; done
    kill "$pid"; wait "$pid" || true
  done
done
for v in "${variants[@]}"; do
  line="median $v jobs=$n runs=$runs"
  for k in "${keys[@]}"; do line+=" $k=$(printf '%s' "${results["$v $k"]}" | median)"; done
  echo "$line"
done
