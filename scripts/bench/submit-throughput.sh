#!/usr/bin/env bash
# Jobs per second to "accepted" (durable) and to Completed, for N single-task simulated jobs sent
# as YAML (sim) and as structured fields (sim-struct: submitJob, no YAML to read) and N real
# /bin/true jobs (true, YAML), each run on a fresh single-node calderad. With each run it measures the
# machine's raw spawn rate (a tight posix_spawn + wait loop of /bin/true, N times) and calderad's
# CPU time, and prints jobs/s over spawns/s and calderad's CPU per job. Prints every run and the
# medians.
# Usage: scripts/bench/submit-throughput.sh [N=1000] [RUNS=3] [KINDS="sim sim-struct true"]
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-1000}"
runs="${2:-3}"
kinds="${3:-sim sim-struct true}"
scripts/install-deps.sh
if [ ! -f build-release/build.ninja ]; then
  cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
if ! log=$(cmake --build build-release -j "$(nproc)" --target calderad caldera-shim \
    caldera-bench-submit caldera-bench-spawn 2>&1); then
  echo "$log" >&2
  exit 1
fi

work=$(mktemp -d /tmp/caldera-bench-XXXXXX)
trap 'pkill -f "$work" 2>/dev/null || true; rm -rf "$work"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -E "s/.*[ ^]$1=([0-9.]+).*/\\1/" <<<" $2"; }
# utime + stime of a process, in seconds.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{sub(/.*\) /, ""); print ($12 + $13) / hz}' "/proc/$1/stat"; }

for kind in $kinds; do
  acc=(); comp=(); cpu=(); spawn=(); ratio=()
  for r in $(seq "$runs"); do
    dir="$work/$kind-$r"
    mkdir -p "$dir"
    sp=$(build-release/scripts/bench/caldera-bench-spawn "$n")
    build-release/node/calderad --port 0 --data-dir "$dir" --port-file "$dir/port" \
      --log-level warn >"$dir/log" 2>&1 &
    pid=$!
    for _ in $(seq 200); do [ -s "$dir/port" ] && break; sleep 0.05; done
    before=$(cpu_s "$pid")
    api=yaml
    [ "$kind" = sim-struct ] && api=struct
    out=$(build-release/scripts/bench/caldera-bench-submit --server "127.0.0.1:$(cat "$dir/port")" \
      --jobs "$n" --kind "${kind%-struct}" --api "$api" --prefix "b$r")
    after=$(cpu_s "$pid")
    per_job=$(awk -v a="$after" -v b="$before" -v n="$n" 'BEGIN {printf "%.3f", (a - b) * 1000 / n}')
    c=$(field completed_per_s "$out")
    s=$(field spawns_per_s "$sp")
    q=$(awk -v c="$c" -v s="$s" 'BEGIN {printf "%.3f", c / s}')
    echo "$out calderad_cpu_ms_per_job=$per_job spawns_per_s=$s completed_over_spawns=$q"
    acc+=("$(field accepted_per_s "$out")"); comp+=("$c"); cpu+=("$per_job")
    spawn+=("$s"); ratio+=("$q")
    kill "$pid"; wait "$pid" || true
  done
  med() { printf '%s\n' "$@" | median; }
  echo "median kind=$kind jobs=$n runs=$runs accepted_per_s=$(med "${acc[@]}")" \
    "completed_per_s=$(med "${comp[@]}") calderad_cpu_ms_per_job=$(med "${cpu[@]}")" \
    "spawns_per_s=$(med "${spawn[@]}") completed_over_spawns=$(med "${ratio[@]}")"
done
