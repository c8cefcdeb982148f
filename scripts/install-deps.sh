#!/usr/bin/env bash
# Installs everything the project needs on a Debian 12 machine that already
# has the Swift toolchain: Debian's C libraries and tools, PostgreSQL,
# promtool (from Debian's prometheus package), and a Python venv (.venv) with
# the stock gRPC packages used by the interop tests.
# Idempotent and quick when nothing is missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

apt_packages=(
  pkg-config
  libnghttp2-dev nghttp2-client        # HTTP/2 (and h2load for bench/)
  libprotobuf-c-dev protobuf-c-compiler # protobuf-c runtime and protoc-c
  libssl-dev openssl                    # TLS, JWS/JWT crypto, test PKI
  libpq-dev postgresql postgresql-contrib # libpq and a server for the private cluster
  python3 python3-venv
  prometheus                            # promtool: checks metrics and alert rules (Tests/interop)
  procps psmisc curl
  libcurl4-openssl-dev                  # FaultBench's URLSession: a static release build links libcurl itself
)

missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  "$root/scripts/apt-install.sh" "${missing[@]}"
  sudo_cmd=""; [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  # Debian starts a system cluster on install; the project runs its own.
  $sudo_cmd systemctl disable --now postgresql >/dev/null 2>&1 || true
  # Only promtool is used; Debian's package also starts a Prometheus server.
  $sudo_cmd systemctl disable --now prometheus >/dev/null 2>&1 || true
fi

command -v swift >/dev/null || { echo "the Swift 6 toolchain must be on PATH (see README)" >&2; exit 2; }

venv="$root/.venv"
stamp="$venv/.requirements-installed"
if [[ ! -f "$stamp" || "$root/scripts/requirements.txt" -nt "$stamp" ]]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$root/scripts/requirements.txt"
  touch "$stamp"
fi
