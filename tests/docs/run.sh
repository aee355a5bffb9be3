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
# A comment `# prints X` must equal its standard output.  A line is not
# run (counted and listed with the reason, -v) when it is a template
# rather than a command: a placeholder (FILE.zg, RUN, R, …, `[…]`), a file
# the document shows but the repository does not have (a bare name such
# as w.zg), a model server, a person at a terminal, or a server that runs
# until stopped (--view, lsp).
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
pass=0 fail=0 skip=0
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

# run FILE LINE WANT_STATUS COMMAND COMMENT: one command in $shell_dir
run_one() {
  local file=$1 line=$2 want=$3 cmd=$4 comment=$5 out status want_out=""
  case $comment in prints\ *) want_out=${comment#prints } ;; esac
  out=$(cd "$copy" && timeout 120 bash -c "$cmd" 2> "$tmp/err" < /dev/null)
  status=$?
  if [ "$status" -ne "$want" ]; then
    echo "FAIL $file:$line (exit $status, expected $want): $cmd"; head -5 "$tmp/err"
    fail=$((fail + 1))
  elif [ -n "$want_out" ] && [ "$out" != "$want_out" ]; then
    echo "FAIL $file:$line: printed $out; the document says $want_out: $cmd"
    fail=$((fail + 1))
  else
    pass=$((pass + 1))
    [ -n "$verbose" ] && echo "ok $file:$line: $cmd"
  fi
}

# The commands: FILE, LINE, expected status, command, comment (tab-separated).
extract() {
  awk '
    function flush() {
        if (pending != "") { print FILENAME "\t" pline "\t" pstatus "\t" pending "\t" pcomment; pending = "" }
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
        fence = !fence; transcript = 0; cont = 0; next
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
            if (pending != "" && line ~ /^zgc: (error|trace check failed)/) pstatus = 1
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
while IFS=$'\t' read -r file line want cmd comment; do
  why=$(template "$cmd" "$comment")
  if [ -n "$why" ]; then
    skip=$((skip + 1)); skipped="$skipped$file:$line: $why: $cmd"$'\n'; continue
  fi
  run_one "$file" "$line" "$want" "$cmd" "$comment"
done < <(extract "${docs[@]}")
[ -n "$verbose" ] && printf 'not run:\n%s' "$skipped"
echo "docs: $pass commands passed, $fail failed, $skip templates not run"
[ "$fail" -eq 0 ]
