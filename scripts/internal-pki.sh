#!/usr/bin/env bash
# A private CA for the services' internal mutual TLS and one certificate per
# caller or service, for local runs (scripts/run.sh) and tests. Not for
# production: there, certificates come from your own CA (see compose/).
#
#   scripts/internal-pki.sh DIR NAME[=SAN]...
#
# DIR/ca.pem    the CA certificate: what TLS_CLIENT_CA, POINTS_TLS_CA and
#               BACKEND_TLS_CA_FILE point at
# DIR/ca.key    the CA's private key (only this script reads it)
# DIR/NAME.pem  a certificate for NAME, usable as server and as client
#               (extendedKeyUsage serverAuth, clientAuth), subject CN=NAME,
#               subjectAltName SAN (default DNS:NAME: the identity the
#               services authorise, and the server name clients check);
#               NAME= (empty SAN) makes one without subjectAltName
# DIR/NAME.key  its private key
#
# Idempotent: the CA and each certificate are made once and made again only
# when missing, within a day of expiring, or not issued by DIR/ca.pem. Keys
# are written with umask 077 and never printed. INTERNAL_PKI_DAYS (default
# 90) is the validity of new service certificates; the CA gets ten years.
set -euo pipefail
umask 077
[[ $# -ge 2 ]] || { sed -n '2,21p' "$0" >&2; exit 2; }
dir="$1"
shift
days="${INTERNAL_PKI_DAYS:-90}"
[[ "$days" =~ ^[0-9]+$ ]] && ((days >= 1 && days <= 825)) || { echo "INTERNAL_PKI_DAYS must be 1...825" >&2; exit 2; }
mkdir -p "$dir"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Still valid for a day and issued by our CA.
usable() {
  [[ -s "$1" && -s "${1%.pem}.key" ]] \
    && openssl x509 -in "$1" -noout -checkend 86400 >/dev/null 2>&1 \
    && { [[ "$1" == "$dir/ca.pem" ]] || openssl verify -CAfile "$dir/ca.pem" "$1" >/dev/null 2>&1; }
}

if ! usable "$dir/ca.pem"; then
  cat > "$work/ca.cnf" <<'CNF'
[req]
distinguished_name = dn
prompt = no
[dn]
CN = IAP credits internal CA (local)
[ca]
basicConstraints = critical,CA:TRUE,pathlen:0
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
CNF
  openssl req -x509 -config "$work/ca.cnf" -extensions ca -newkey ec -pkeyopt ec_paramgen_curve:P-256 -noenc \
    -days 3650 -keyout "$dir/ca.key" -out "$dir/ca.pem" >/dev/null 2>"$work/openssl.err" \
    || { cat "$work/openssl.err" >&2; exit 1; }
  chmod 644 "$dir/ca.pem"
  echo "internal-pki: new CA $dir/ca.pem" >&2
fi

for spec in "$@"; do
  name="${spec%%=*}"
  if [[ "$spec" == *=* ]]; then san="${spec#*=}"; else san="DNS:$name"; fi
  [[ "$name" =~ ^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$ ]] || { echo "internal-pki: bad name $name (a DNS name in lower case)" >&2; exit 2; }
  usable "$dir/$name.pem" && continue
  { printf '[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = %s\n[leaf]\n' "$name"
    printf 'basicConstraints = critical,CA:FALSE\nkeyUsage = critical,digitalSignature\n'
    printf 'extendedKeyUsage = serverAuth,clientAuth\nsubjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid\n'
    [[ -n "$san" ]] && printf 'subjectAltName = %s\n' "$san"
  } > "$work/leaf.cnf"
  openssl req -x509 -config "$work/leaf.cnf" -extensions leaf -newkey ec -pkeyopt ec_paramgen_curve:P-256 -noenc \
    -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -days "$days" -keyout "$dir/$name.key" -out "$dir/$name.pem" \
    >/dev/null 2>"$work/openssl.err" || { cat "$work/openssl.err" >&2; exit 1; }
  chmod 644 "$dir/$name.pem"
  echo "internal-pki: new certificate $dir/$name.pem (${san:-no subjectAltName})" >&2
done
