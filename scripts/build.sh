#!/usr/bin/env bash
# Configures and builds caldera into build/ (Debug by default: the fastest to compile here).
set -euo pipefail
cd "$(dirname "$0")/.."
"$(pwd)/scripts/install-deps.sh"
build_type="${CALDERA_BUILD_TYPE:-Debug}"
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type" >/dev/null
fi
cmake --build build -j "$(nproc)" "$@"
