#!/usr/bin/env bash
# The one way this repository builds release binaries, with whatever
# arguments are given (--product, --package-path, --show-bin-path, ...).
# Everything that runs or measures release binaries builds through here
# (scripts/run.sh, the benchmarks, leak-check, compose/Dockerfile), so a
# benchmark measures what ships, and .build/release is not rebuilt back and
# forth between two flag sets (these flags change every module's compile
# command, not only the link).
#
# What the flags do, and why (measured in docs/PERFORMANCE.md, "Idle RSS"):
#   --static-swift-stdlib   the Swift runtime and Foundation (with its ICU)
#       are linked in, so a process maps only the pages it touches of them
#       instead of whole shared libraries relocated at start-up.
#   -use-ld=lld, -z pack-relative-relocs   lld writes the executable's
#       relative relocations as DT_RELR (glibc 2.36 and later, Debian 12
#       included): a few KiB instead of the 1.8 MiB .rela.dyn that every
#       start-up reads in; gold, the default, cannot.
# The C libraries (OpenSSL, nghttp2, protobuf-c, libpq) stay shared:
# Debian's packages keep them patched. Debug builds (`swift build`,
# scripts/test.sh) are unchanged.
#
#   scripts/build-release.sh --product Gateway
#   scripts/build-release.sh --show-bin-path
set -euo pipefail
exec swift build -c release --static-swift-stdlib \
  -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs "$@"
