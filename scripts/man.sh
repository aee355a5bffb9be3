#!/usr/bin/env bash
# Writes the manual pages from the documentation: zgc.1 from docs/zgc.md
# whole, and zgc-COMMAND.1 for each command from its "### zgc COMMAND …"
# sections of the same file, each page's one-line summary from `zgc --help`
# (so the pages say what the documentation and the command say, nothing of
# their own).  pandoc turns the Markdown into roff, its tables into lists
# (scripts/man-tables.lua).
#   usage: scripts/man.sh ZGC DOCS/zgc.md OUTDIR VERSION
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: scripts/man.sh ZGC DOCS/zgc.md OUTDIR VERSION" >&2; exit 2; }
zgc=$1 doc=$2 out=$3 version=$4
command -v pandoc > /dev/null || { echo "scripts/man.sh: pandoc is needed (scripts/install-deps.sh)" >&2; exit 1; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
date=$(date -u -d "@$(stat -c %Y "$doc")" +%Y-%m-%d)

# pandoc's man writer: the .TH line from the metadata
man() { # NAME MARKDOWN OUT
    pandoc -s -f gfm -t man --lua-filter "$(dirname "$0")/man-tables.lua" -M "title=$1" -M section=1 -M "date=$date" \
        -M "footer=zgc $version" -M "header=ZipperGen workflow compiler" "$2" -o "$3"
    # left-aligned text: the narrow columns of the option tables cannot
    # be justified without gaps (man --warnings: "cannot adjust line")
    sed -i '0,/^\.TH /{/^\.TH /a .ad l
}' "$3"
}

# zgc(1): the whole file, its sections one level up
tail -n +2 "$doc" | sed 's/^## /# /; s/^### /## /; s/^#### /### /' > "$tmp/zgc.md"
man ZGC "$tmp/zgc.md" "$out/zgc.1"

# zgc-COMMAND(1): the "### zgc COMMAND" sections, in order; a command with
# several (trace check, trace show) gets each as a subsection
awk -v dir="$tmp" '
    /^## / { cmd = "" }
    /^### zgc [a-z-]+/ {
        split($0, w, " "); cmd = w[3]
        syn = substr($0, 5)
        gsub(/\\\|/, "|", syn)
        print syn >> (dir "/" cmd ".syn")
        if (!(cmd in seen)) { seen[cmd] = 1; print cmd > (dir "/commands") }
        else print "## " syn "\n" >> (dir "/" cmd ".body")
        next
    }
    cmd != "" { sub(/^#### /, "### "); print >> (dir "/" cmd ".body") }
' "$doc"
[ -s "$tmp/commands" ] || { echo "scripts/man.sh: no \"### zgc COMMAND\" sections in $doc" >&2; exit 1; }
"$zgc" --help > "$tmp/help"
while read -r cmd; do
    # the summary: the text after the command's name in zgc --help, with
    # its continuation lines
    summary=$(awk -v c="$cmd" '
        f && /^             / { sub(/^ +/, ""); printf " %s", $0; next }
        f { exit }
        $1 == c { f = 1; $1 = ""; sub(/^ +/, ""); printf "%s", $0 }' "$tmp/help")
    [ -n "$summary" ] || { echo "scripts/man.sh: zgc --help does not list \`$cmd\`" >&2; exit 1; }
    {
        printf '# NAME\n\nzgc-%s — %s\n\n# SYNOPSIS\n\n' "$cmd" "$summary"
        sed 's/^/    /' "$tmp/$cmd.syn"
        printf '\n# DESCRIPTION\n\n'
        cat "$tmp/$cmd.body"
        printf '\n# SEE ALSO\n\nzgc(1); the full manual: docs/zgc.md in the sources.\n'
    } > "$tmp/$cmd.md"
    man "$(printf '%s' "zgc-$cmd" | tr 'a-z' 'A-Z')" "$tmp/$cmd.md" "$out/zgc-$cmd.1"
done < "$tmp/commands"
