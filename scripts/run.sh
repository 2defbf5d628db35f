#!/usr/bin/env bash
# Installs what is missing, builds, starts the embedded single-node default (calderad) in the
# background, submits examples/hello.yaml, waits for it, and shows its status and output.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
bin=build
caldera="$bin/client/caldera"
port="${CALDERA_PORT:-7070}"
export CALDERA_SERVER="127.0.0.1:$port"

if "$caldera" get nodes >/dev/null 2>&1; then
  echo "calderad is already serving on $CALDERA_SERVER"
else
  mkdir -p caldera-data
  nohup "$bin/node/calderad" --port "$port" --data-dir ./caldera-data \
    >caldera-data/calderad.log 2>&1 &
  echo $! >caldera-data/calderad.pid
  for _ in $(seq 100); do
    "$caldera" get nodes >/dev/null 2>&1 && break
    kill -0 "$(cat caldera-data/calderad.pid)" 2>/dev/null || {
      cat caldera-data/calderad.log; echo "calderad did not start" >&2; exit 1; }
    sleep 0.1
  done
  echo "calderad started (pid $(cat caldera-data/calderad.pid), log caldera-data/calderad.log)"
fi

"$caldera" get nodes
"$caldera" delete job hello >/dev/null 2>&1 || true
"$caldera" submit -f examples/hello.yaml
"$caldera" wait job hello --for=phase=Completed --timeout=60s
"$caldera" get job hello
"$caldera" get pods --job hello
for pod in hello-driver-0 hello-worker-0 hello-worker-1; do
  echo "--- logs $pod"
  "$caldera" logs "$pod"
done
echo
echo "calderad keeps serving on $CALDERA_SERVER. Stop it with: kill \$(cat caldera-data/calderad.pid)"
