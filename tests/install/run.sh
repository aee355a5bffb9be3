#!/usr/bin/env bash
# Installation and package tests, with the real installed files:
#   1. `cmake --install` into a temporary prefix; then, in a private mount
#      namespace where the build tree and the source tree are hidden
#      (an empty tmpfs over each, so nothing of them can be reached), the
#      installed zgc says where it is, checks, builds and runs examples
#      (one process and per lifeline; a C file of actions; an import of the
#      standard library; a planner, through the installed planner library), `pkg-config` gives a C program the runtime's
#      header and library, every manual page passes `man --warnings`, and
#      the bash completion completes commands and options;
#   2. `cpack -G DEB`, then `dpkg -i` of the package into an overlay of the
#      machine's root (the machine itself stays untouched), and the same
#      checks with /usr/bin/zgc, the build and source trees hidden again.
#   usage: tests/install/run.sh BUILD_DIR
set -euo pipefail
build=$(realpath "${1:?usage: tests/install/run.sh BUILD_DIR}")
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
cleanup() {
    # the overlay and its mounts live in the namespace that made them
    rm -rf "$tmp" 2> /dev/null || true
}
trap cleanup EXIT
fail() {
    echo "install: $*" >&2
    exit 1
}
# a private mount namespace: as root, or as an unprivileged user where
# user namespaces are allowed
ns=(unshare -m)
if ! "${ns[@]}" true 2> /dev/null; then
    ns=(unshare -r -m)
    "${ns[@]}" true 2> /dev/null ||
        fail "needs a private mount namespace (unshare -m): run as root, or allow unprivileged user namespaces"
fi

# the files the checks use, outside both trees
mkdir -p "$tmp/work"
cp "$root/examples/hello.zg" "$root/examples/triage.zg" "$root/examples/arithmetic.zg" \
  "$root/examples/arithmetic.json" "$tmp/work/"
cp -r "$root/examples/extern" "$tmp/work/extern"
cat > "$tmp/work/uses_header.c" << 'C'
#include <stdio.h>
#include "zgrt.h"
int zg_probe(zgrt_call *call)
{
    zgrt_ret_str(call, 0, "ok");
    return 0;
}
int main(void) { printf("%d\n", (int)sizeof(zgrt_call *)); return 0; }
C

# The checks, run inside the namespace with the installed zgc at $1 and
# the installation's prefix at $2.
cat > "$tmp/checks.sh" << 'SH'
set -euo pipefail
zgc=$1 prefix=$2 work=$3
fail() { echo "install: $*" >&2; exit 1; }
export ZGC_CACHE=$work/cache HOME=$work
unset ZGC_BACKEND ZGC_RUNTIME_LIB ZGC_RUNTIME_INCLUDE ZGC_STDLIB ZGC_PLANNER_LIB
cd "$work"
"$zgc" --version | grep -qx "from the installation in $prefix" ||
    fail "zgc --version: $("$zgc" --version)"
"$zgc" check hello.zg || fail "zgc check"
[ "$("$zgc" run hello.zg --arg topic=hi)" = '"[write_reply:draft]"' ] || fail "zgc run hello"
[ "$("$zgc" run --processes hello.zg --arg topic=hi)" = '"[write_reply:draft]"' ] ||
    fail "zgc run --processes hello"
# the standard library: triage.zg imports llm.zg
"$zgc" check triage.zg || fail "zgc check triage.zg (an import of the standard library)"
"$zgc" build triage.zg -o out-triage > /dev/null || fail "zgc build triage.zg"
out=$(out-triage/triage --arg ticket="The printer is on fire" 2>&1) || fail "triage: $out"
# a planner: its executables link the installed planner library
out=$("$zgc" run arithmetic.zg --arg 'expression=(3 + 4) * (10 - 2)' \
  --llm scripted:arithmetic.json 2>&1) || fail "zgc run arithmetic.zg (a planner): $out"
[ "$out" = 56 ] || fail "zgc run arithmetic.zg printed $out, not 56"
# a C file of actions (includes zgrt.h from the installation)
"$zgc" build extern/score.zg extern/actions.c -o out-score > /dev/null || fail "zgc build score"
out=$(out-score/score --arg draft="Short words help." 2>&1) || fail "score: $out"
# pkg-config
export PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name zgrt.pc | head -1)")
flags=$(pkg-config --cflags zgrt) || fail "pkg-config --cflags zgrt"
cc $flags -c uses_header.c -o uses_header.o || fail "cc with pkg-config's flags"
pkg-config --libs --static zgrt | grep -q -- "-lzgrt" || fail "pkg-config --libs zgrt"
# manual pages: no groff warning at all, in a UTF-8 locale (the pages
# have tables as lists, scripts/man-tables.lua, and a few non-ASCII
# signs the manual shows, such as the viewer's ↻)
n=0
for page in "$prefix"/share/man/man1/zgc*.1; do
    w=$(LANG=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 > /dev/null) ||
        fail "man $page failed"
    [ -z "$w" ] || fail "man --warnings $page: $w"
    n=$((n + 1))
done
[ "$n" -ge 10 ] || fail "only $n manual pages"
MANWIDTH=80 man -l "$prefix/share/man/man1/zgc-run.1" | grep -q "zgc-run" || fail "zgc-run(1)"
# bash completion
comp=$prefix/share/bash-completion/completions/zgc
PATH=$(dirname "$zgc"):$PATH bash -c '
    source "$1"
    COMP_WORDS=(zgc ch); COMP_CWORD=1; _zgc
    [ "${COMPREPLY[*]}" = check ] || { echo "completion of ch: ${COMPREPLY[*]}"; exit 1; }
    COMP_WORDS=(zgc run --proc); COMP_CWORD=2; _zgc
    [ "${COMPREPLY[*]}" = --processes ] || { echo "completion of run --proc: ${COMPREPLY[*]}"; exit 1; }
' _ "$comp" || fail "bash completion"
echo "install: checks passed for $zgc"
SH

# ---- 1. cmake --install into a prefix ----------------------------------------
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" > "$tmp/install.log" || fail "cmake --install: $(tail -5 "$tmp/install.log")"
"${ns[@]}" bash -c '
    set -e
    mount -t tmpfs none "$2" # the build tree first: it may be inside the source tree
    mount -t tmpfs none "$1"
    [ ! -e "$1/CMakeLists.txt" ] && [ ! -e "$2/CMakeCache.txt" ]
    bash "$3/checks.sh" "$3/prefix/bin/zgc" "$3/prefix" "$3/work"
' _ "$root" "$build" "$tmp" || fail "the installed zgc failed (above)"

# ---- 2. the Debian package ---------------------------------------------------
command -v dpkg > /dev/null || fail "no dpkg"
(cd "$build" && cpack -G DEB --config CPackConfig.cmake > "$tmp/cpack.log" 2>&1) ||
    fail "cpack: $(tail -20 "$tmp/cpack.log")"
deb=$(ls -t "$build"/package/zgc_*.deb | head -1)
[ -f "$deb" ] || fail "cpack made no .deb"
dpkg-deb -f "$deb" Depends | grep -q "libjansson-dev" || fail "the package's Depends: $(dpkg-deb -f "$deb" Depends)"
# ICU is loaded with dlopen (trace check): named by hand
dpkg-deb -f "$deb" Depends | grep -q "libicu[0-9]" || fail "the package does not depend on ICU: $(dpkg-deb -f "$deb" Depends)"
if dpkg-deb -c "$deb" | grep -q -- "$build"; then fail "the package names the build tree"; fi
mkdir -p "$tmp/ov/upper" "$tmp/ov/work" "$tmp/ov/root"
cp "$deb" "$tmp/work/zgc.deb"
"${ns[@]}" bash -c '
    set -e
    r=$1/ov/root
    mount -t overlay overlay -o "lowerdir=/,upperdir=$1/ov/upper,workdir=$1/ov/work" "$r"
    mount --bind /proc "$r/proc"
    mount --bind /dev "$r/dev"
    mount -t tmpfs none "$r/tmp"
    # (a tree under /tmp is hidden already, by the tmpfs there)
    [ ! -d "$r$3" ] || mount -t tmpfs none "$r$3"
    [ ! -d "$r$2" ] || mount -t tmpfs none "$r$2"
    mkdir -p "$r/tmp/work"
    cp -r "$1/work/." "$r/tmp/work/"
    cp "$1/checks.sh" "$r/tmp/checks.sh"
    chroot "$r" dpkg -i /tmp/work/zgc.deb > "$1/dpkg.log" 2>&1 || { cat "$1/dpkg.log"; exit 1; }
    [ ! -e "$r$2/CMakeLists.txt" ]
    chroot "$r" bash /tmp/checks.sh /usr/bin/zgc /usr /tmp/work
' _ "$tmp" "$root" "$build" || fail "the Debian package failed (above)"
echo "install: ok (cmake --install and $(basename "$deb"))"
