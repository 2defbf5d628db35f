#!/usr/bin/env bash
# Runs the nodes of a cluster config on this machine, one `calderad --config FILE --node NAME`
# each, with a pid file and a log file per node under ${CALDERA_RUN_DIR:-./caldera-run}/<cluster>/.
# It only ever signals the processes it started: a pid is used only while it is alive and is a
# calderad of that config and node.
set -euo pipefail

caller_dir="$PWD"
cd "$(dirname "$0")/.."

usage() {
  cat <<'EOF'
usage: scripts/cluster.sh COMMAND [NODE] [--config FILE]
  up [NODE]       start the node(s) not running, the coordinator first, and wait for each to serve
  down [NODE]     stop the node(s), workers before the coordinator: SIGTERM, SIGKILL after 10 s
  status          one line per node: name, pid, state, client address, log file
  kill NODE       SIGKILL the node (a crash)
  stop NODE       SIGSTOP the node (a hang); cont resumes it
  cont NODE       SIGCONT the node
  restart NODE    down, then up
  --config FILE   the cluster config (default: cluster-config/local-3.yaml)
Environment: CALDERAD (default build/node/calderad), CALDERA_RUN_DIR (default ./caldera-run).
EOF
}

bad_usage() {
  echo "cluster.sh: $1" >&2
  usage >&2
  exit 2
}

die() {
  echo "cluster.sh: $*" >&2
  exit 1
}

# A path given by the caller is relative to where it ran the script from; defaults are relative
# to the repository root.
from_caller() {
  case "$1" in
    /*) echo "$1" ;;
    *) echo "$caller_dir/$1" ;;
  esac
}

command="" node="" config=""
while [ $# -gt 0 ]; do
  case "$1" in
    --config)
      [ $# -ge 2 ] || bad_usage "--config needs a file"
      config="$(from_caller "$2")"
      shift 2
      ;;
    --config=*)
      config="$(from_caller "${1#--config=}")"
      shift
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    -*) bad_usage "unknown option $1" ;;
    *)
      if [ -z "$command" ]; then
        command="$1"
      elif [ -z "$node" ]; then
        node="$1"
      else
        bad_usage "unexpected argument $1"
      fi
      shift
      ;;
  esac
done
case "$command" in
  up | down) ;;
  status) [ -z "$node" ] || bad_usage "status takes no NODE" ;;
  kill | stop | cont | restart) [ -n "$node" ] || bad_usage "$command needs a NODE" ;;
  "") bad_usage "no command" ;;
  *) bad_usage "unknown command $command" ;;
esac

[ -n "$config" ] || config="cluster-config/local-3.yaml"
[ -r "$config" ] || die "cannot read the cluster config $config"
# calderad gets the config by its absolute path: that is what the pid checks compare.
config="$(realpath -e "$config")"

calderad="${CALDERAD:-build/node/calderad}"
[ -n "${CALDERAD:-}" ] && calderad="$(from_caller "$calderad")"
run_root="${CALDERA_RUN_DIR:-caldera-run}"
[ -n "${CALDERA_RUN_DIR:-}" ] && run_root="$(from_caller "$run_root")"

# The cluster's name, coordinator, and each node's name, host and clientPort, from the YAML. This
# is no YAML parser: it reads block-style configs as shipped in cluster-config/ (top-level
# `cluster:` and `nodes:`, one `- name:` line per node, then its keys indented under the name),
# which is good enough for them; flow style (`nodes: [{name: a}]`) is not read.
read_config() {
  awk '
    function value(line) {
      sub(/^[^:]*:[ \t]*/, "", line)
      if (line ~ /^".*"$/ || line ~ /^'"'"'.*'"'"'$/) line = substr(line, 2, length(line) - 2)
      return line
    }
    function indent(line) { match(line, /^[ \t]*/); return RLENGTH }
    {
      sub(/(^|[ \t])#.*/, "")
      sub(/[ \t\r]+$/, "")
      if ($0 == "") next
      if ($0 ~ /^[^ \t]/) { section = $0; sub(/:.*/, "", section); key_indent = -1; next }
      if (section == "cluster") {
        if (key_indent < 0) key_indent = indent($0)
        if (indent($0) != key_indent) next
        if ($0 ~ /^[ \t]*name:/) cluster = value($0)
        else if ($0 ~ /^[ \t]*coordinator:/) coordinator = value($0)
      } else if (section == "nodes") {
        if ($0 ~ /^[ \t]*-[ \t]+name:/) {
          n++
          name[n] = value($0)
          host[n] = "127.0.0.1"
          port[n] = "7070"
          key_indent = index($0, "name:") - 1
        } else if (n > 0 && indent($0) == key_indent) {
          if ($0 ~ /^[ \t]*host:/) host[n] = value($0)
          else if ($0 ~ /^[ \t]*clientPort:/) port[n] = value($0)
        }
      }
    }
    END {
      if (cluster == "") cluster = "caldera"
      if (coordinator == "" && n > 0) coordinator = name[1]
      print "cluster", cluster
      print "coordinator", coordinator
      for (i = 1; i <= n; i++) print "node", name[i], host[i], port[i]
    }
  ' "$1"
}

cluster="" coordinator=""
nodes=()
declare -A host_of=() port_of=()
while read -r kind a b c; do
  case "$kind" in
    cluster) cluster="$a" ;;
    coordinator) coordinator="$a" ;;
    node)
      nodes+=("$a")
      host_of[$a]="$b"
      port_of[$a]="$c"
      ;;
  esac
done < <(read_config "$config")
[ ${#nodes[@]} -gt 0 ] || die "no nodes found in $config (this script reads block-style configs)"
run_dir="$run_root/$cluster"

if [ -n "$node" ] && [ -z "${host_of[$node]+set}" ]; then
  die "node '$node' is not in $config (nodes: ${nodes[*]})"
fi

pid_file() { echo "$run_dir/$1.pid"; }
log_file() { echo "$run_dir/$1.log"; }
# A path as the caller would type it: relative to where it ran the script from, if under it.
shown() {
  local abs
  abs="$(realpath -m "$1")"
  case "$abs" in
    "$caller_dir"/*) echo "${abs#"$caller_dir"/}" ;;
    *) echo "$abs" ;;
  esac
}
client_of() { echo "${host_of[$1]}:${port_of[$1]}"; }

# The state letter of a process (R, S, D, T, t, Z, ...), or nothing when there is none.
proc_state() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 0
  stat="${stat##*) }"
  echo "${stat%% *}"
}

# Whether `pid` is alive and is the calderad started for this config and `node`.
is_ours() {
  local pid="$1" node="$2" i
  [[ "$pid" =~ ^[1-9][0-9]*$ ]] || return 1
  case "$(proc_state "$pid")" in "" | Z | X) return 1 ;; esac
  local args=()
  mapfile -d '' -t args <"/proc/$pid/cmdline" 2>/dev/null || return 1
  [ ${#args[@]} -gt 0 ] && [ "$(basename -- "${args[0]}")" = calderad ] || return 1
  local has_config="" has_node=""
  for ((i = 1; i + 1 < ${#args[@]}; i++)); do
    [ "${args[i]}" = --config ] && [ "${args[i + 1]}" = "$config" ] && has_config=1
    [ "${args[i]}" = --node ] && [ "${args[i + 1]}" = "$node" ] && has_node=1
  done
  [ -n "$has_config" ] && [ -n "$has_node" ]
}

# The pid of the node's running calderad, or nothing; a pid file that names anything else (a
# process that ended, or a pid now used by another) is removed, with a note.
running_pid() {
  local node="$1" file pid
  file="$(pid_file "$node")"
  [ -f "$file" ] || return 0
  pid="$(cat "$file" 2>/dev/null || true)"
  if is_ours "$pid" "$node"; then
    echo "$pid"
  else
    echo "$node: removing the stale pid file $(shown "$file")" \
      "(pid ${pid:-none} is not its calderad)" >&2
    rm -f "$file"
  fi
}

# Whether something accepts connections on host:port.
answers() {
  local host="$1" port="$2"
  [ "$host" = 0.0.0.0 ] && host=127.0.0.1
  # shellcheck disable=SC2016 # expanded by the inner shell
  timeout 1 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$host" "$port" 2>/dev/null
}

# The lines this start wrote to the log, the last 20 of them.
log_tail() {
  awk '/^--- cluster.sh: starting / { n = 0 } { line[++n] = $0 } END {
    for (i = (n > 20 ? n - 19 : 1); i <= n; i++) print "    " line[i] }' "$1"
}

# The coordinator, then the other nodes in config order; or just `node`.
start_order() {
  if [ -n "$node" ]; then
    echo "$node"
    return
  fi
  echo "$coordinator"
  local n
  for n in "${nodes[@]}"; do [ "$n" = "$coordinator" ] || echo "$n"; done
}

# The workers in reverse config order, then the coordinator; or just `node`.
stop_order() {
  if [ -n "$node" ]; then
    echo "$node"
    return
  fi
  local i
  for ((i = ${#nodes[@]} - 1; i >= 0; i--)); do
    [ "${nodes[i]}" = "$coordinator" ] || echo "${nodes[i]}"
  done
  echo "$coordinator"
}

up_node() {
  local n="$1" pid log file client
  log="$(log_file "$n")"
  file="$(pid_file "$n")"
  client="$(client_of "$n")"
  local shown_log
  shown_log="$(shown "$log")"
  pid="$(running_pid "$n")"
  if [ -n "$pid" ]; then
    echo "$n already up pid $pid client $client log $shown_log"
    return
  fi
  if answers "${host_of[$n]}" "${port_of[$n]}"; then
    die "$n: client port $client is already in use by another process"
  fi
  mkdir -p "$run_dir"
  echo "--- cluster.sh: starting $n at $(date '+%Y-%m-%dT%H:%M:%S')" >>"$log"
  # The shell writes its own pid, then becomes calderad: the pid file names calderad itself.
  # setsid: a session of its own, so that it outlives this script and its terminal.
  # shellcheck disable=SC2016 # expanded by the inner shell
  setsid bash -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$file" \
    "$calderad" --config "$config" --node "$n" </dev/null >>"$log" 2>&1 &
  local i
  for ((i = 0; i < 100; i++)); do
    sleep 0.1
    pid="$(cat "$file" 2>/dev/null || true)"
    [ -n "$pid" ] || continue
    case "$(proc_state "$pid")" in
      "" | Z | X)
        rm -f "$file"
        echo "$n exited at start; the end of $shown_log:" >&2
        log_tail "$log" >&2
        exit 1
        ;;
    esac
    if is_ours "$pid" "$n" && answers "${host_of[$n]}" "${port_of[$n]}"; then
      echo "$n up pid $pid client $client log $shown_log"
      return
    fi
  done
  echo "$n: not serving on $client after 10 s (pid ${pid:-?}); the end of $shown_log:" >&2
  log_tail "$log" >&2
  die "$n may still be starting; stop it with: scripts/cluster.sh down $n"
}

# Waits up to `tenths` tenths of a second for the node's calderad `pid` to end.
wait_gone() {
  local pid="$1" n="$2" tenths="$3" i
  for ((i = 0; i < tenths; i++)); do
    is_ours "$pid" "$n" || return 0
    sleep 0.1
  done
  ! is_ours "$pid" "$n"
}

down_node() {
  local n="$1" pid
  pid="$(running_pid "$n")"
  if [ -z "$pid" ]; then
    echo "$n down (was not running)"
    return
  fi
  # A stopped calderad is continued first, and given a moment to be back in its signal wait: a
  # SIGTERM that is pending when it resumes ends it at once, without its orderly shutdown.
  case "$(proc_state "$pid")" in
    T | t)
      kill -CONT "$pid"
      local i
      for ((i = 0; i < 10; i++)); do
        case "$(proc_state "$pid")" in T | t) sleep 0.1 ;; *) break ;; esac
      done
      sleep 0.2
      ;;
  esac
  is_ours "$pid" "$n" && kill -TERM "$pid"
  if wait_gone "$pid" "$n" 100; then
    echo "$n down pid $pid (SIGTERM)"
  else
    is_ours "$pid" "$n" && kill -KILL "$pid"
    wait_gone "$pid" "$n" 50 || die "$n: pid $pid did not end on SIGKILL"
    echo "$n down pid $pid (SIGKILL: still running 10 s after SIGTERM)"
  fi
  rm -f "$(pid_file "$n")"
}

# Sends `signal` to the node's calderad; it must be running.
signal_node() {
  local n="$1" signal="$2" pid
  pid="$(running_pid "$n")"
  [ -n "$pid" ] || die "$n is not running"
  kill "-$signal" "$pid"
  echo "$pid"
}

status_line() {
  local n="$1" pid state="down"
  pid="$(running_pid "$n")"
  if [ -n "$pid" ]; then
    case "$(proc_state "$pid")" in
      T | t) state="stopped" ;;
      *) state="running" ;;
    esac
  fi
  printf '%-12s %-8s %-8s %-21s %s\n' "$n" "${pid:--}" "$state" "$(client_of "$n")" \
    "$(shown "$(log_file "$n")")"
}

need_calderad() {
  [ -x "$calderad" ] || die "no calderad at $calderad: run scripts/build.sh first (or set CALDERAD)"
}

case "$command" in
  up)
    need_calderad
    for n in $(start_order); do up_node "$n"; done
    ;;
  down)
    for n in $(stop_order); do down_node "$n"; done
    ;;
  status)
    printf '%-12s %-8s %-8s %-21s %s\n' NAME PID STATE CLIENT LOG
    for n in "${nodes[@]}"; do status_line "$n"; done
    ;;
  kill)
    pid="$(signal_node "$node" KILL)"
    wait_gone "$pid" "$node" 50 || die "$node: pid $pid did not end on SIGKILL"
    rm -f "$(pid_file "$node")"
    echo "$node killed pid $pid (SIGKILL)"
    ;;
  stop)
    pid="$(signal_node "$node" STOP)"
    echo "$node stopped pid $pid (SIGSTOP; resume with: scripts/cluster.sh cont $node)"
    ;;
  cont)
    pid="$(signal_node "$node" CONT)"
    echo "$node continued pid $pid (SIGCONT)"
    ;;
  restart)
    need_calderad
    down_node "$node"
    up_node "$node"
    ;;
esac
