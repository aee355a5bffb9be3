#!/usr/bin/env bash
# The commands of the documentation, run as a reader would run them, from
# the top of a fresh copy of the repository (its committed files), with
# `zgc` and `build/zgc` the zgc under test.  From README.md, docs/*.md,
# examples/README.md, examples/*/README.md and stdlib/README.md:
#   - in a fenced block written as a transcript (lines `$ COMMAND`), every
#     command, in order (a block's commands see the files the ones before
#     made); the lines after a command are what it shows;
#   - in any other fenced block, every line that starts with `zgc` or
#     `build/zgc`, each on its own (continued over lines ending in `\`).
# A command must exit 0 — or, when the transcript shows it failing (an
# error line after it, or `$ echo $?` printing its status), that status.
# A comment `# prints X` must equal its standard output, and the lines a
# transcript shows after a command must be what it prints (standard output
# and error together), line by line: `…` in a shown line stands for any
# text, a line that is only `…` for any number of lines, and a comment
# after two spaces (`  # …`) is the document's, not the output's; in a
# block where a template was not run, what later commands show depends on
# it and is not compared.  A line is not
# run (counted and listed with the reason, -v) when it is a template
# rather than a command: a placeholder (FILE.zg, RUN, R, …, `[…]`), a file
# the document shows but the repository does not have (a bare name such
# as w.zg), a model server, a NATS server, a person at a terminal, or a
# server that runs until stopped (--view, lsp).
#   usage: tests/docs/run.sh ZGC [-v]
set -u
zgc=$(realpath "${1:?usage: tests/docs/run.sh ZGC [-v]}")
verbose=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
copy=$tmp/repo
mkdir -p "$copy"
(cd "$root" && git ls-files -z | xargs -0 cp --parents -t "$copy") ||
  { echo "docs: cannot copy the repository"; exit 1; }
mkdir -p "$copy/build" "$tmp/bin"
ln -s "$zgc" "$copy/build/zgc"
ln -s "$zgc" "$tmp/bin/zgc"
export PATH="$tmp/bin:$PATH" ZGC_CACHE="$tmp/cache" HOME="$tmp"
unset ZGC_STORE OPENAI_API_KEY
pass=0 fail=0 skip=0 compared=0
skipped=""

# why a command is not run, or nothing
template() {
  local cmd=$1 comment=$2 w
  if grep -qE '…|\.\.\.|\[|<[A-Za-z]|[^|]\|[^|]' <<< "$cmd"; then echo "a template"; return; fi
  if grep -qE '(^| |=|/)([A-Z]|[A-Z][A-Z_]*[A-Z])(\.[a-z]+)?( |$|/|=)|FILE|TRACE' <<< "$cmd"; then
    echo "a placeholder"; return
  fi
  if grep -qE -- '--llm[= ]*(openai|ollama)|OPENAI_|OLLAMA_' <<< "$cmd"; then echo "a model server"; return; fi
  if grep -qE -- '--view|zgc lsp' <<< "$cmd"; then echo "serves until stopped"; return; fi
  if grep -qE -- '--nats|nats://' <<< "$cmd"; then echo "a NATS server"; return; fi
  if grep -qiE 'terminal' <<< "$comment"; then echo "a person at a terminal"; return; fi
  if grep -qE '[0-9]{8}-[0-9]{6}' <<< "$cmd"; then echo "a run id of the reader's"; return; fi
  local out=0
  for w in $cmd; do
    # a file the command writes (--trace F, -o F) need not be there
    if [ "$out" = 1 ]; then out=0; continue; fi
    case $w in
      --trace|-o|--error-file|--result-file) out=1 ;;
      */*|-*) ;;
      *.zg|*.jsonl|*.json|*.c)
        [ -e "$copy/$w" ] || { echo "a file the document shows ($w)"; return; } ;;
    esac
  done
}

# matches SHOWN OUTPUT: 0 when the file OUTPUT has the lines of SHOWN (see
# above); else prints the first line that differs
matches() {
  awk '
    # like(s, p): s matches p, where each … in p stands for any text
    function like(s, p,    k, n, part, at) {
        n = split(p, part, "…")
        if (n == 1) return s == p
        if (substr(s, 1, length(part[1])) != part[1]) return 0
        s = substr(s, length(part[1]) + 1)
        for (k = 2; k < n; k++) {
            at = index(s, part[k]); if (!at) return 0
            s = substr(s, at + length(part[k]))
        }
        return length(s) >= length(part[n]) && substr(s, length(s) - length(part[n]) + 1) == part[n]
    }
    FNR == NR { sub(/  +# .*$/, ""); sub(/ +$/, ""); want[++n] = $0; next }
    { sub(/ +$/, ""); got[++m] = $0 }
    END {
        i = 1; j = 1
        while (i <= n) {
            if (want[i] == "…") {
                if (i == n) exit 0
                while (j <= m && !like(got[j], want[i + 1])) j++
                i++; continue
            }
            if (j > m) { print "missing: " want[i]; exit 1 }
            if (!like(got[j], want[i])) { print "shown:   " want[i]; print "printed: " got[j]; exit 1 }
            i++; j++
        }
        if (j <= m) { print "printed more: " got[j]; exit 1 }
    }' "$1" "$2"
}

# run FILE LINE WANT_STATUS COMMAND COMMENT SHOWN: one command in $copy;
# SHOWN is a file with the lines a transcript shows after it, or empty
run_one() {
  local file=$1 line=$2 want=$3 cmd=$4 comment=$5 shown=$6 out status want_out="" diff
  case $comment in prints\ *) want_out=${comment#prints } ;; esac
  if [ -n "$shown" ]; then
    (cd "$copy" && timeout 120 bash -c "$cmd" > "$tmp/both" 2>&1 < /dev/null)
    status=$?
    out=$(cat "$tmp/both"); cp "$tmp/both" "$tmp/err"
  else
    out=$(cd "$copy" && timeout 120 bash -c "$cmd" 2> "$tmp/err" < /dev/null)
    status=$?
  fi
  if [ "$status" -ne "$want" ]; then
    echo "FAIL $file:$line (exit $status, expected $want): $cmd"; head -5 "$tmp/err"
    fail=$((fail + 1))
  elif [ -n "$want_out" ] && [ "$out" != "$want_out" ]; then
    echo "FAIL $file:$line: printed $out; the document says $want_out: $cmd"
    fail=$((fail + 1))
  elif [ -n "$shown" ] && ! diff=$(matches "$shown" "$tmp/both"); then
    echo "FAIL $file:$line: the output is not what the document shows: $cmd"; echo "$diff"
    fail=$((fail + 1))
  else
    pass=$((pass + 1))
    [ -n "$verbose" ] && echo "ok $file:$line: $cmd"
  fi
}

# The commands: FILE, LINE, expected status, command, comment and the file
# of the lines a transcript shows after it, if any (separated by US, so
# that empty fields stay fields).
extract() {
  mkdir -p "$tmp/shown"
  awk -v dir="$tmp/shown" -v US=$'\037' '
    function flush() {
        if (pending != "") { print FILENAME US pline US pstatus US pending US pcomment US pshown US block; pending = "" }
        if (pshown != "") close(pshown)
        pshown = ""
    }
    function take(at, text,    c) {
        c = ""
        if (index(text, " # ")) { c = substr(text, index(text, " # ") + 3); text = substr(text, 1, index(text, " # ") - 1) }
        sub(/ +$/, "", text)
        pending = text; pline = at; pstatus = 0; pcomment = c
    }
    FNR == 1 { fence = 0; pending = ""; transcript = 0 }
    /^ *```/ {
        if (fence) flush()
        fence = !fence; transcript = 0; cont = 0; block++
        indent = $0; sub(/[^ ].*$/, "", indent); indent = length(indent)
        next
    }
    !fence { next }
    {
        line = $0; sub(/^ +/, "", line)
        if (cont) {
            sub(/^ +/, "", line); pending = pending " " line; sub(/ *\\$/, "", pending)
            cont = (line ~ /\\$/); next
        }
        if (line ~ /^\$ /) {
            transcript = 1; line = substr(line, 3)
            if (line ~ /^echo \$\?/) { getline shown; gsub(/ /, "", shown); if (pending != "") pstatus = shown; flush(); next }
            flush()
            take(FNR, line)
            if (line ~ /\\$/) { sub(/ *\\$/, "", pending); cont = 1 }
            next
        }
        if (transcript) {
            if (pending == "") next
            if (line ~ /^zgc: (error|trace check failed)/) pstatus = 1
            if (pshown == "") pshown = dir "/" ++nshown
            shown = $0; for (k = 0; k < indent && substr(shown, 1, 1) == " "; k++) shown = substr(shown, 2)
            print shown > pshown
            next
        }
        if (line ~ /^(build\/)?zgc /) {
            flush(); take(FNR, line)
            if (line ~ /\\$/) { sub(/ *\\$/, "", pending); cont = 1 }
            flush_now = (line !~ /\\$/)
            if (flush_now) flush()
        }
    }' "$@"
}

cd "$root"
docs=(README.md docs/*.md examples/README.md examples/*/README.md stdlib/README.md)
template_block=""
while IFS=$'\037' read -r file line want cmd comment shown block; do
  why=$(template "$cmd" "$comment")
  if [ -n "$why" ]; then
    skip=$((skip + 1)); skipped="$skipped$file:$line: $why: $cmd"$'\n'
    template_block=$block; continue
  fi
  # what a transcript shows after a template depends on it: not compared
  [ "$block" = "$template_block" ] && shown=""
  [ -n "$shown" ] && compared=$((compared + 1))
  run_one "$file" "$line" "$want" "$cmd" "$comment" "$shown"
done < <(extract "${docs[@]}")
[ -n "$verbose" ] && printf 'not run:\n%s' "$skipped"
echo "docs: $pass commands passed ($compared outputs compared), $fail failed, $skip templates not run"
[ "$fail" -eq 0 ]
