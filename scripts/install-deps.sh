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
  sqlite3           # its shell: tests read the run store's tables (tests/durable/run_commits.sh)
  libssl-dev        # libcrypto: authenticated connections between lifelines, program fingerprints
  libicu-dev        # Unicode case mapping of the trace oracle (oracle/eval.c)
  libnats-dev       # the NATS C client: the --nats transport between lifelines (runtime/nats)
  nats-server       # a real NATS server (JetStream) for the --nats tests and benchmark (tests/nats)
  openssl           # throwaway TLS certificates of the NATS security tests (tests/nats)
  clang-format      # the house style (.clang-format), checked by scripts/format.sh
  chromium          # the viewer's browser tests (tests/viewer): headless, driven by puppeteer-core
  fonts-dejavu-core # the font the viewer's pages ask for, so screenshots match their references
  vim               # the Vim syntax file's test (tests/editors/vim.sh) runs it headless
  git
  pandoc            # the manual pages, made from docs/zgc.md (scripts/man.sh)
  man-db            # `man --warnings` checks those pages (tests/install)
  dpkg-dev file     # dpkg-shlibdeps and file: how cpack finds the .deb's library dependencies (tests/install)
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
# Node.js and npm run the browser tests (their npm packages come from
# tests/viewer/package-lock.json, installed by tests/viewer/run.sh with npm
# ci), the language server's tests (tests/lsp), the editor files' tests
# (tests/editors: tests/editors/package-lock.json, npm ci in
# tests/editors/run.sh) and the VS Code extension's build
# (scripts/build-vsix.sh: editors/vscode/package-lock.json).  A machine that has them from elsewhere keeps its own; otherwise
# Debian's.
if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends nodejs npm
fi
