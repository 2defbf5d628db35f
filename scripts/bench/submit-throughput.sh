#!/usr/bin/env bash
# Jobs per second to "accepted" (durable) and to Completed, for N single-task simulated jobs sent
# as YAML (sim) and as structured fields (sim-struct: submitJob, no YAML to read) and N real
# /bin/true jobs (true, YAML), each run on a fresh single-node calderad. With each run it measures
# the machine's raw spawn rate (a tight posix_spawn + wait loop of /bin/true, N times) and
# calderad's CPU time, and prints jobs/s over spawns/s and calderad's CPU per job. Prints every
# run and the medians. completed_per_s ends when the client's final list has confirmed every
# job; completed_by_node_clock_per_s ends when the last job finished (Completed or Failed) by the
# node's clock (last_completed_s), without that list.
# With a baseline revision (e.g. the commit before a change), every run measures that revision's
# calderad too, with the same client and the same spawn-rate figure, so the two come from one
# run. (A baseline older than submitJob fails the sim-struct kind.) Each other variant's median
# line then also gives completed_over_baseline: the median, over runs, of its jobs/s over the
# baseline's in the same run.
# With ONE_WORKER=1, every run also measures the current calderad with --actor-threads 1 (variant
# current-1w), the setting that takes less CPU per job on a 2-CPU machine.
# Usage: scripts/bench/submit-throughput.sh [N=1000] [RUNS=3] [KINDS="sim sim-struct true"]
#        [BASELINE_REV]
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-1000}"
runs="${2:-3}"
kinds="${3:-sim sim-struct true}"
baseline="${4:-}"
scripts/install-deps.sh

source scripts/bench/lib.sh
build_release . build-release calderad caldera-shim caldera-bench-submit caldera-bench-spawn
setup_variants "$baseline"
declare -A extra_args=()
if [ "${ONE_WORKER:-0}" = 1 ]; then
  variants+=(current-1w)
  calderad["current-1w"]=${calderad[current]}
  extra_args["current-1w"]="--actor-threads 1"
fi

work=$(mktemp -d /tmp/caldera-bench-XXXXXX)
trap 'pkill -f "$work" 2>/dev/null || true; rm -rf "$work"' EXIT

# utime + stime of a process, in seconds.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{sub(/.*\) /, ""); print ($12 + $13) / hz}' "/proc/$1/stat"; }

for kind in $kinds; do
  declare -A acc=() comp=() clock=() cpu=() ratio=() paired=()
  spawn=()
  for r in $(seq "$runs"); do
    sp=$(build-release/scripts/bench/caldera-bench-spawn "$n")
    s=$(field spawns_per_s "$sp")
    spawn+=("$s")
    for v in "${variants[@]}"; do
      dir="$work/$kind-$r-$v"
      mkdir -p "$dir"
      # shellcheck disable=SC2086 # the extra arguments are words
      "${calderad[$v]}" --port 0 --data-dir "$dir" --port-file "$dir/port" --log-level warn \
        ${extra_args[$v]:-} >"$dir/log" 2>&1 &
      pid=$!
      for _ in $(seq 200); do [ -s "$dir/port" ] && break; sleep 0.05; done
      api=yaml
      [ "$kind" = sim-struct ] && api=struct
      before=$(cpu_s "$pid")
      out=$(build-release/scripts/bench/caldera-bench-submit \
        --server "127.0.0.1:$(cat "$dir/port")" --jobs "$n" --kind "${kind%-struct}" --api "$api" \
        --prefix "b$r")
      after=$(cpu_s "$pid")
      per_job=$(awk -v a="$after" -v b="$before" -v n="$n" 'BEGIN {printf "%.3f", (a - b) * 1000 / n}')
      c=$(field completed_per_s "$out")
      q=$(awk -v c="$c" -v s="$s" 'BEGIN {printf "%.3f", c / s}')
      echo "$v $out calderad_cpu_ms_per_job=$per_job spawns_per_s=$s completed_over_spawns=$q"
      acc[$v]+="$(field accepted_per_s "$out") "; comp[$v]+="$c "; cpu[$v]+="$per_job "
      clock[$v]+="$(awk -v n="$(field completed "$out")" -v t="$(field last_completed_s "$out")" \
        'BEGIN {printf "%.1f", (t > 0 ? n / t : 0)}') "
      ratio[$v]+="$q "
      # Against the baseline's figure of the same run: the machine's speed drifts between runs
      # far more than within one, so the median of these ratios is the steadier comparison.
      if [ "$v" = baseline ]; then
        base_c=$c
      elif [ -n "${base_c:-}" ]; then
        paired[$v]+="$(awk -v c="$c" -v b="$base_c" 'BEGIN {printf "%.3f", c / b}') "
      fi
      kill "$pid"; wait "$pid" || true
    done
    base_c=
  done
  for v in "${variants[@]}"; do
    # shellcheck disable=SC2086 # the lists are space-separated numbers
    echo "median $v kind=$kind jobs=$n runs=$runs accepted_per_s=$(med ${acc[$v]})" \
      "completed_per_s=$(med ${comp[$v]}) completed_by_node_clock_per_s=$(med ${clock[$v]})" \
      "calderad_cpu_ms_per_job=$(med ${cpu[$v]})" \
      "spawns_per_s=$(med "${spawn[@]}") completed_over_spawns=$(med ${ratio[$v]})" \
      ${paired[$v]:+"completed_over_baseline=$(med ${paired[$v]})"}
  done
  unset acc comp clock cpu ratio paired
done
