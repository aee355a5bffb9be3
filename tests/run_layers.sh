#!/usr/bin/env bash
# The layering check (scripts/check-layers.sh) on this build: it must pass,
# and it must fail, naming the edge, when the rules forbid an edge that
# the tree has (the grammar including and calling the compiler; a header
# of a subfolder including the runtime core; the
# driver calling the backend's loader), and when an executable it checks
# needs libLLVM.
#   usage: tests/run_layers.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: tests/run_layers.sh BUILD_DIR}
check=$(dirname "$0")/../scripts/check-layers.sh
"$check" "$build"

rules=$(sed -n "/^RULES=\${LAYERS_RULES:-'/,/^'}/p" "$check" | sed '1d;$d')
narrow=$(printf '%s\n' "$rules" | sed 's/^grammar: .*/grammar: vocab/')
out=$(LAYERS_RULES="$narrow" "$check" "$build" 2>&1) && {
    echo "run_layers: the check passed with rules that forbid grammar -> compiler"
    exit 1
}
for want in 'grammar/grammar.h includes compiler/zgc.h: grammar may not depend on compiler' \
    'grammar/syntax.c calls zu_alloc of compiler/util.c: grammar may not depend on compiler'; do
    grep -qF "$want" <<< "$out" || {
        echo "run_layers: missing \"$want\" in:"
        echo "$out"
        exit 1
    }
done
# a header in a subfolder is checked too: with rules that forbid the
# durable library the runtime core, its header's include is named
narrow=$(printf '%s\n' "$rules" | sed 's/^runtime\/durable: .*/runtime\/durable: vocab/')
out=$(LAYERS_RULES="$narrow" "$check" "$build" 2>&1) && {
    echo "run_layers: the check passed with rules that forbid runtime/durable -> runtime"
    exit 1
}
grep -qF "runtime/durable/durable.h includes runtime/rt.h: runtime/durable may not depend on runtime" <<< "$out" || {
    echo "run_layers: missing the runtime/durable/durable.h include in:"
    echo "$out"
    exit 1
}
# an executable that links libLLVM is caught (the backend's own test does)
out=$(LAYERS_NO_LLVM="$build/tests/backend/test_backend" "$check" "$build" 2>&1) && {
    echo "run_layers: the check passed on an executable that needs libLLVM"
    exit 1
}
grep -qF "test_backend needs libLLVM: only the backend module (zgc-backend.so) may" <<< "$out" || {
    echo "run_layers: missing the libLLVM violation in:"
    echo "$out"
    exit 1
}
# a call from the driver into the backend is caught: with rules that
# leave out backend/load, the driver's one call there is named
narrow=$(printf '%s\n' "$rules" | sed 's/^driver: .*/driver: grammar compiler oracle anomalies viewer runtime\/view vocab/')
out=$(LAYERS_RULES="$narrow" "$check" "$build" 2>&1) && {
    echo "run_layers: the check passed with rules that forbid driver -> backend/load"
    exit 1
}
grep -qF "calls zb_load of backend/load.c: driver may not depend on backend/load" <<< "$out" || {
    echo "run_layers: missing the driver -> backend/load call in:"
    echo "$out"
    exit 1
}
echo "run_layers: ok"
