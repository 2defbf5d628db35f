#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit and integration) with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
# Integration tests start several calderad processes; two at a time suits a 2-core machine.
ctest --test-dir build --output-on-failure -j 2 --timeout 300 "$@"
