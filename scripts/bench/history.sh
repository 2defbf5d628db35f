#!/usr/bin/env bash
# What finished jobs cost a node over time. On a fresh embedded node: N one-pod simulated jobs run
# to Completed (structured submits), then
#   rss_bytes_per_finished_job   calderad's resident memory growth per job (VmRSS before, and
#                                once it has settled after the last job completed): all N at
#                                once, so thousands are live together at the peak
#   rounds_rss_bytes_per_job     the same on another fresh node, N jobs in 10 rounds of N/10 (each
#                                waits for the one before to complete): from the node before its
#                                first job to the node settled after the last round, its fixed
#                                buffers (memtables, block cache) included
#   data_bytes_per_job           its data dir per job
# then kill -9 and a restart on that data dir:
#   port_ms                      the restart to the client port's being open
#   serving_ms                   ... then to the first answered ping
#   job_readable_ms              ... to `get job` of the oldest job answering
#   first_page_ms, get_job_ms    a page of 500 jobs of every namespace (summary), and `get job`
#                                of the oldest, medians of 9 (ping_ms: the round trip alone)
#   after_restart_jobs_per_s     new jobs (10,000, or N if fewer) to Completed right after (0:
#                                a request went unanswered for a minute), in a namespace of
#                                their own: the client's final count lists that namespace, not
#                                the N finished jobs (4 s at a million)
# With LIVE=L, L jobs whose pods run for an hour are then submitted (most wait for a pod slot:
# all are live), and after another kill -9 and restart:
#   live_port_ms, live_serving_ms, live_first_page_ms, live_get_job_ms   as above, with the
#                                live jobs recovered
# With a baseline revision, every run measures its calderad too, with the same clients.
# VmRSS has settled once it stayed within 1 MiB for 7 s: finished jobs stop their actors in the
# seconds after the client saw them complete, and calderad hands freed memory back every 5 s.
# Usage: scripts/bench/history.sh [N=100000] [RUNS=1] [BASELINE_REV]
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-100000}"
runs="${2:-1}"
baseline="${3:-}"
after=$((n < 10000 ? n : 10000))
live="${LIVE:-0}"
scripts/install-deps.sh

source scripts/bench/lib.sh
build_release . build-release calderad caldera-shim caldera caldera-bench-submit \
  caldera-bench-history-probe
setup_variants "$baseline"

work=$(mktemp -d /tmp/caldera-bench-XXXXXX)
trap 'pkill -f "$work" 2>/dev/null || true; rm -rf "$work"' EXIT

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
settled_rss_kb() {  # pid: VmRSS once 7 samples a second apart are within 1 MiB (at most 2 min)
  local samples=()
  for _ in $(seq 120); do
    sleep 1
    samples+=("$(rss_kb "$1")")
    [ "${#samples[@]}" -lt 7 ] && continue
    if printf '%s\n' "${samples[@]: -7}" | awk 'NR == 1 {lo = hi = $1} {if ($1 < lo) lo = $1; if ($1 > hi) hi = $1} END {exit !(hi - lo <= 1024)}'; then
      break
    fi
  done
  echo "${samples[-1]}"
}
start_node() {  # variant, dir: starts calderad, sets pid, server and port_ms (start to port open)
  local t0
  t0=$(date +%s%N)
  "${calderad[$1]}" --port 0 --data-dir "$2" --port-file "$2/port" --log-level warn >>"$2/log" 2>&1 &
  pid=$!
  for _ in $(seq 20000); do [ -s "$2/port" ] && break; sleep 0.001; done
  port_ms=$((($(date +%s%N) - t0) / 1000000))
  server="127.0.0.1:$(cat "$2/port")"
}

declare -A results  # "variant key" -> values
keys=(rss_bytes_per_finished_job rounds_rss_bytes_per_job data_bytes_per_job port_ms serving_ms
  job_readable_ms first_page_ms get_job_ms ping_ms after_restart_jobs_per_s)
[ "${LIVE:-0}" -gt 0 ] && keys+=(live_port_ms live_serving_ms live_first_page_ms live_get_job_ms)
round=$((n / 10))
for r in $(seq "$runs"); do
  for v in "${variants[@]}"; do
    dir="$work/run-$r-$v"
    mkdir -p "$dir"
    start_node "$v" "$dir"
    build-release/client/caldera --server "$server" get nodes >/dev/null
    rss0=$(rss_kb "$pid")
    out=$(build-release/scripts/bench/caldera-bench-submit --server "$server" --jobs "$n" \
      --kind sim --api struct --prefix h)
    rss1=$(settled_rss_kb "$pid")
    per_job=$(awk -v a="$rss1" -v b="$rss0" -v n="$n" 'BEGIN {printf "%.0f", (a - b) * 1024 / n}')
    data=$(du -sb "$dir" | awk -v n="$n" '{printf "%.0f", $1 / n}')
    kill -9 "$pid"; wait "$pid" 2>/dev/null || true
    rm -f "$dir/port"
    start_node "$v" "$dir"
    probe="port_ms=$port_ms $(build-release/scripts/bench/caldera-bench-history-probe \
      --server "$server" --job h-1)"
    # A node still recovering may leave a request unanswered past the client's timeout.
    again=$(build-release/scripts/bench/caldera-bench-submit --server "$server" --jobs "$after" \
      --kind sim --api struct --prefix a --namespace after) || again="completed_per_s=0"
    line="$v jobs=$n completed_per_s=$(field completed_per_s "$out")"
    line+=" rss_bytes_per_finished_job=$per_job data_bytes_per_job=$data $probe"
    line+=" after_restart_jobs_per_s=$(field completed_per_s "$again")"
    if [ "$live" -gt 0 ]; then
      build-release/scripts/bench/caldera-bench-submit --server "$server" --jobs "$live" \
        --kind sim --api struct --prefix live --sim-ms 3600000 --accept-only >/dev/null
      kill -9 "$pid"; wait "$pid" 2>/dev/null || true
      rm -f "$dir/port"
      start_node "$v" "$dir"
      # The after-restart jobs took the history past a million (the default maxFinishedJobs),
      # and retention deleted the oldest: a job from the middle is read instead.
      probe=$(build-release/scripts/bench/caldera-bench-history-probe --server "$server" \
        --job "h-$((n / 2))")
      line+=" live_port_ms=$port_ms"
      for k in serving_ms first_page_ms get_job_ms; do line+=" live_$k=$(field "$k" "$probe")"; done
    fi
    kill "$pid"; wait "$pid" 2>/dev/null || true
    # Rounds: RSS of the fresh node, and once the last round is done and the node has settled.
    mkdir -p "$dir-rounds"
    start_node "$v" "$dir-rounds"
    build-release/client/caldera --server "$server" get nodes >/dev/null
    fresh=$(rss_kb "$pid")
    for i in $(seq 10); do
      build-release/scripts/bench/caldera-bench-submit --server "$server" --jobs "$round" \
        --kind sim --api struct --prefix "r$i" >/dev/null
    done
    last=$(settled_rss_kb "$pid")
    line+=" rounds_rss_bytes_per_job=$(awk -v a="$last" -v b="$fresh" -v n="$((round * 10))" \
      'BEGIN {printf "%.0f", (a - b) * 1024 / n}')"
    kill "$pid"; wait "$pid" 2>/dev/null || true
    echo "$line"
    for k in "${keys[@]}"; do results["$v $k"]+="$(field "$k" "$line") "; done
  done
done
for v in "${variants[@]}"; do
  line="median $v jobs=$n runs=$runs"
  # shellcheck disable=SC2086 # the lists are space-separated numbers
  for k in "${keys[@]}"; do line+=" $k=$(med ${results["$v $k"]})"; done
  echo "$line"
done
