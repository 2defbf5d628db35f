#!/usr/bin/env bash
# JobFlow DAG steps: the time from a job's Completed to the creation of the job that depends on
# it, for a chain of 200 simulated jobs (sim-duration-ms 0; each entry depends on the one before:
# 199 steps) and a fan-out / fan-in of 1,000 (a root, 1,000 entries that depend on it, a sink that
# depends on all of them: 1,001 steps), each submitted as one YAML (its JobTemplates and the
# JobFlow) to a fresh single-node calderad of its own. Times come from the jobs' records
# (createdMs and the Completed transition, whole milliseconds), so a step is an integer; the
# chain's flow time (the flow's creation to its last job's Completed) over its 199 links is the
# finer figure, though it also holds each job's own run (created to Completed, job_run_*).
# seen_lag: how late the flow learned that a job finished (the end time of the job's line in the
# flow's status minus the job's Completed time); a flow actor that falls behind shows there.
# Prints every run and the medians. (Slurm: about 37 ms per afterok link.)
# Usage: scripts/bench/flow-dag.sh [RUNS=3] [CHAIN=200] [FAN=1000]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-3}"
chain="${2:-200}"
fan="${3:-1000}"
scripts/install-deps.sh

source scripts/bench/lib.sh
build_release . build-release calderad caldera-shim caldera-bench-flow

work=$(mktemp -d /tmp/caldera-bench-XXXXXX)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT


for shape in chain fan; do
  n=$chain
  [ "$shape" = fan ] && n=$fan
  declare -A vals=()
  keys="flow_ms step_p50_ms step_p99_ms step_max_ms flow_ms_per_link job_run_p50_ms seen_lag_p50_ms"
  [ "$shape" = fan ] && keys+=" sink_step_ms"
  for r in $(seq "$runs"); do
    dir="$work/$shape-$r"
    mkdir -p "$dir"
    build-release/node/calderad --port 0 --data-dir "$dir" --port-file "$dir/port" \
      --log-level warn >"$dir/log" 2>&1 &
    pid=$!
    for _ in $(seq 200); do [ -s "$dir/port" ] && break; sleep 0.05; done
    if ! out=$(build-release/scripts/bench/caldera-bench-flow \
      --server "127.0.0.1:$(cat "$dir/port")" --shape "$shape" --jobs "$n" --prefix "${shape:0:1}$r"); then
      echo "run $r of $shape failed; calderad's log:" >&2
      tail -20 "$dir/log" >&2
      exit 1
    fi
    echo "$out"
    for k in $keys; do vals[$k]+="$(field "$k" "$out") "; done
    kill "$pid"; wait "$pid" || true
    pid=""
  done
  line="median shape=$shape jobs=$n runs=$runs"
  # shellcheck disable=SC2086 # the lists are space-separated numbers
  for k in $keys; do line+=" $k=$(med ${vals[$k]})"; done
  echo "$line"
  unset vals
done
