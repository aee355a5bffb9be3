#!/usr/bin/env bash
# The layering check (scripts/check-layers.sh) on this build: it must pass,
# and it must fail, naming the edge, when the rules forbid an edge that
# the tree has (the grammar including and calling the compiler).
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
echo "run_layers: ok"
