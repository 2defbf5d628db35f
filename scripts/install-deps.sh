#!/usr/bin/env bash
# Installs the Debian packages caldera builds and runs with, only those that are missing.
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config ccache
  libcaf-dev capnproto libcapnp-dev librocksdb-dev libuv1-dev libgtest-dev
  libyaml-cpp-dev libfyaml-dev libspdlog-dev libcli11-dev nlohmann-json3-dev libfmt-dev
  libgoogle-perftools-dev prometheus-cpp-dev libssl-dev curl openssh-client)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
