#!/usr/bin/env bash
# Installs the Debian 12 packages zgc needs to build and test.
# Run as root (or with sudo). Safe to run more than once.
set -euo pipefail
pkgs=(
  build-essential   # C compiler, make, libc headers
  cmake ninja-build # build system
  pkg-config
  flex bison        # lexer and parser generators (grammar/)
  llvm-dev          # LLVM-C API for the native backend
  clang libclang-rt-14-dev  # libFuzzer and the sanitizer runtimes
  libcriterion-dev  # unit test framework
  libjansson-dev    # JSON reading/writing (traces, histories)
  libcurl4-openssl-dev  # HTTP client for OpenAI-compatible model servers
  libsqlite3-dev    # the run store of durable runs (runtime/durable, driver/store.c)
  libssl-dev        # SHA-256 of program fingerprints (backend/link.c)
  libicu-dev        # Unicode case mapping of the trace oracle (oracle/eval.c)
  clang-format      # the house style (.clang-format), checked by scripts/format.sh
  git
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
