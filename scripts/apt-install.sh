#!/usr/bin/env bash
# Installs the Debian packages named on the command line that are not
# installed yet, and nothing when all are. Refreshes the package lists
# first: a fresh machine has none, so an install without `apt-get update`
# cannot find any package. Used by install-deps.sh and by the benches for
# their own tools (wrk, pgbouncer, C++ gRPC).
# Usage: scripts/apt-install.sh PACKAGE...
set -euo pipefail
(($#)) || { echo "usage: $0 PACKAGE..." >&2; exit 2; }
missing=()
for package in "$@"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
((${#missing[@]})) || exit 0
sudo_cmd=""; [[ $(id -u) -eq 0 ]] || sudo_cmd="sudo"
echo "installing: ${missing[*]}" >&2
timeout 300 $sudo_cmd apt-get update -qq >&2
timeout 600 $sudo_cmd env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
