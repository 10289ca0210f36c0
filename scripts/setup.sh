#!/usr/bin/env bash
# Installs what vramplan needs to build and test on Debian 12, skipping what is already there.
# Safe to run again. Needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config nlohmann-json3-dev libcli11-dev libfmt-dev
          libgtest-dev libgmock-dev libbenchmark-dev clang-format python3 python3-matplotlib
          libcpp-httplib-dev libcurl4-openssl-dev wrk chromium ccache curl openssl)
# The web front end is built with Node.js and npm; Debian's nodejs is used only when none is
# installed (the front end needs Node 18 or newer).
command -v node >/dev/null 2>&1 || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
