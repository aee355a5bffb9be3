#!/usr/bin/env bash
# The Vim syntax file (editors/vim) in a real Vim, headless: the ftdetect
# file gives *.zg the filetype zg, and every keyword of the lexer (read
# from grammar/lexer.l, so that a new keyword without highlighting fails
# here) gets a zg syntax group.
#   usage: tests/editors/vim.sh ROOT
set -euo pipefail
root=$(cd "${1:?usage: vim.sh ROOT}" && pwd)
command -v vim > /dev/null || {
    echo "vim: vim is missing (scripts/install-deps.sh installs it)"
    exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the lexer's keywords: `"while"  { ... }` and `"store"|"cell"|... {`
sed -n 's/^\(\("[a-z_]*"|\?\)\+\)[[:space:]]\+{.*/\1/p' "$root/grammar/lexer.l" |
    tr '|' '\n' | tr -d '"' | sort -u > "$tmp/keywords"
n=$(wc -l < "$tmp/keywords")
[ "$n" -ge 30 ] || { echo "vim: only $n keywords found in grammar/lexer.l"; exit 1; }
sed 's/.*/x & y/' "$tmp/keywords" > "$tmp/all.zg"
cat > "$tmp/check.vim" << 'VIM'
let out = ['filetype ' . &filetype]
for l in range(1, line('$'))
  let g = synIDattr(synID(l, 3, 1), 'name')
  call add(out, getline(l) . ' ' . g)
endfor
call writefile(out, $ZG_OUT)
qall!
VIM
ZG_OUT=$tmp/out vim -u NONE -i NONE -N -n -es \
    --cmd "set rtp^=$root/editors/vim" --cmd 'filetype on' --cmd 'syntax on' \
    -c "source $tmp/check.vim" "$tmp/all.zg" < /dev/null || true
[ -s "$tmp/out" ] || { echo "vim: vim wrote nothing"; exit 1; }
[ "$(head -1 "$tmp/out")" = "filetype zg" ] || { echo "vim: *.zg is not filetype zg: $(head -1 "$tmp/out")"; exit 1; }
missing=$(tail -n +2 "$tmp/out" | awk 'NF < 4 || $4 !~ /^zg/ { print $2 }')
if [ -n "$missing" ]; then
    echo "vim: keywords of grammar/lexer.l without a zg syntax group:" $missing
    exit 1
fi
echo "vim: ok ($n keywords of the lexer highlighted)"
