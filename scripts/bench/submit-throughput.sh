#!/usr/bin/env bash
# Jobs per second to "accepted" (durable) and to Completed, for N single-task simulated jobs and
# N real /bin/true jobs, each on a fresh single-node calderad. Prints every run and the medians.
# Usage: scripts/bench/submit-throughput.sh [N=1000] [RUNS=3]
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-1000}"
runs="${2:-3}"
scripts/install-deps.sh
if [ ! -f build-release/build.ninja ]; then
  cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
if ! log=$(cmake --build build-release -j "$(nproc)" --target calderad caldera-shim \
    caldera-bench-submit 2>&1); then
  echo "$log" >&2
  exit 1
fi

work=$(mktemp -d /tmp/caldera-bench-XXXXXX)
trap 'pkill -f "$work" 2>/dev/null || true; rm -rf "$work"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for kind in sim true; do
  acc=(); comp=()
  for r in $(seq "$runs"); do
    dir="$work/$kind-$r"
    mkdir -p "$dir"
    build-release/node/calderad --port 0 --data-dir "$dir" --port-file "$dir/port" \
      --log-level warn >"$dir/log" 2>&1 &
    pid=$!
    for _ in $(seq 200); do [ -s "$dir/port" ] && break; sleep 0.05; done
    out=$(build-release/scripts/bench/caldera-bench-submit --server "127.0.0.1:$(cat "$dir/port")" \
      --jobs "$n" --kind "$kind" --prefix "b$r")
    echo "$out"
    acc+=("$(sed -E 's/.*accepted_per_s=([0-9.]+).*/\1/' <<<"$out")")
    comp+=("$(sed -E 's/.*completed_per_s=([0-9.]+).*/\1/' <<<"$out")")
    kill "$pid"; wait "$pid" || true
  done
  echo "median kind=$kind jobs=$n runs=$runs accepted_per_s=$(printf '%s\n' "${acc[@]}" | median)" \
    "completed_per_s=$(printf '%s\n' "${comp[@]}" | median)"
done
