# Shared by the benchmark scripts (sourced): Release builds, an optional baseline revision built
# beside the current tree, and medians.

build_release() {  # source dir, build dir, targets...
  local src="$1" dir="$2"
  shift 2
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  if ! log=$(cmake --build "$dir" -j "$(nproc)" --target "$@" 2>&1); then
    echo "$log" >&2
    exit 1
  fi
}

# Sets `variants` (baseline first, then current) and `calderad[variant]`. With a revision, its
# calderad and shim are built from `git archive` under build-baseline/<sha>, extracted once so
# that rebuilds stay incremental.
setup_variants() {  # baseline revision or ""
  variants=(current)
  declare -gA calderad=([current]=build-release/node/calderad)
  [ -z "$1" ] && return
  local sha base
  sha=$(git rev-parse --short "$1^{commit}")
  base="build-baseline/$sha"
  if [ ! -d "$base/src" ]; then
    mkdir -p "$base/src"
    git archive "$sha" | tar -x -C "$base/src"
  fi
  build_release "$base/src" "$base/build" calderad caldera-shim
  variants=(baseline current)
  calderad[baseline]="$base/build/node/calderad"
  echo "baseline $sha ($(git log -1 --format=%s "$sha" | cut -c1-60))"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
med() { printf '%s\n' "$@" | median; }
# The number after "NAME=" in a line of KEY=VALUE fields.
field() { sed -E "s/.*[ ^]$1=(-?[0-9.]+).*/\\1/" <<<" $2"; }
# A loopback TCP port that was free a moment ago.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
