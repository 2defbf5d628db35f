#!/usr/bin/env bash
# Resident memory per live and per finished job with N simulated jobs, job state transitions per
# second (abort then resume every job; storage on, fsync on), and calderad CPU per pod of one-pod
# jobs next to one job of up to 10,000 pods. Prints every run and the medians.
# Usage: scripts/bench/job-actors.sh [N=10000] [RUNS=3]
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-10000}"
runs="${2:-3}"
scripts/install-deps.sh
if [ ! -f build-release/build.ninja ]; then
  cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
if ! log=$(cmake --build build-release -j "$(nproc)" --target calderad caldera-shim \
    caldera caldera-bench-jobs 2>&1); then
  echo "$log" >&2
  exit 1
fi

work=$(mktemp -d /tmp/caldera-bench-XXXXXX)
trap 'pkill -f "$work" 2>/dev/null || true; rm -rf "$work"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

mem=(); rate=(); done_mem=(); small=(); bigpod=()
for r in $(seq "$runs"); do
  dir="$work/run-$r"
  mkdir -p "$dir"
  port=$(free_port); cport=$(free_port)
  # One node with room for every simulated pod (they ask only for a pod slot).
  cat >"$dir/cluster.yaml" <<YAML
cluster: {name: bench, coordinator: n1}
nodes:
  - {name: n1, host: 127.0.0.1, clusterPort: $cport, clientPort: $port, dataDir: $dir/data,
     resources: {cpu: 64, memory: 256Gi, pods: $((2 * n + 10100))}}
YAML
  build-release/node/calderad --config "$dir/cluster.yaml" --node n1 --log-level warn \
    >"$dir/log" 2>&1 &
  pid=$!
  for _ in $(seq 200); do
    build-release/client/caldera --server "127.0.0.1:$port" get nodes >/dev/null 2>&1 && break
    sleep 0.05
  done
  out=$(build-release/scripts/bench/caldera-bench-jobs --server "127.0.0.1:$port" --jobs "$n" \
    --pid "$pid" --prefix "r$r")
  echo "$out"
  mem+=("$(sed -E 's/.*bytes_per_live_job=([0-9.]+).*/\1/' <<<"$out")")
  done_mem+=("$(sed -E 's/.*bytes_per_finished_job=([-0-9.]+).*/\1/' <<<"$out")")
  small+=("$(sed -E 's/.*cpu_us_per_pod_of_1pod_jobs=([0-9.]+).*/\1/' <<<"$out")")
  bigpod+=("$(sed -E 's/.*cpu_us_per_pod_of_[0-9]+pod_job=([0-9.]+).*/\1/' <<<"$out")")
  rate+=("$(sed -E 's/.*transitions_per_s=([0-9.]+).*/\1/' <<<"$out")")
  kill "$pid"; wait "$pid" || true
done
echo "median jobs=$n runs=$runs bytes_per_live_job=$(printf '%s\n' "${mem[@]}" | median)" \
  "bytes_per_finished_job=$(printf '%s\n' "${done_mem[@]}" | median)" \
  "transitions_per_s=$(printf '%s\n' "${rate[@]}" | median)" \
  "cpu_us_per_pod_of_1pod_jobs=$(printf '%s\n' "${small[@]}" | median)" \
  "cpu_us_per_pod_of_big_job=$(printf '%s\n' "${bigpod[@]}" | median)"
