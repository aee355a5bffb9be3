#!/usr/bin/env bash
# Puts Debian's tree-sitter program into DIR, as DIR/tree-sitter, for
# scripts/tree-sitter.sh: the package tree-sitter-cli of Debian 13
# (Debian 12 has none, and npm's tree-sitter-cli downloads its program
# from outside the npm registry when it installs), with the C library it
# was built for (libc6 and libgcc-s1 of Debian 13, newer than Debian 12's)
# beside it in DIR/root.  DIR/tree-sitter runs the program with that
# library's own loader, so nothing of the system changes and no root is
# needed; the programs tree-sitter starts itself (node for `generate`,
# cc for the parser it loads) are the system's.
#
# The packages come through apt-get with lists of their own in DIR (the
# archive's signature checked against the system's Debian keyring), the
# .deb files unpacked with dpkg-deb.  Nothing is fetched when
# DIR/tree-sitter already runs.
#
#   scripts/tree-sitter-cli.sh DIR
set -euo pipefail
dir=${1:?usage: scripts/tree-sitter-cli.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if "$dir/tree-sitter" --version > /dev/null 2>&1; then exit 0; fi

suite=trixie # Debian 13
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || {
  echo "tree-sitter-cli.sh: $keyring is missing (apt-get install debian-archive-keyring)" >&2
  exit 1
}
for t in apt-get dpkg-deb; do
  command -v "$t" > /dev/null || { echo "tree-sitter-cli.sh: needs $t (a Debian system)" >&2; exit 1; }
done
apt=$dir/apt
rm -rf "$apt" "$dir/root" "$dir/tree-sitter"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs" "$dir/root"
echo "deb [signed-by=$keyring] http://deb.debian.org/debian $suite main" > "$apt/sources.list"
opts=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o "Dir::Etc::sourceparts=-"
  -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
  -o "Dir::State::status=/dev/null" -o "APT::Sandbox::User=$(id -un)" -q)
apt-get "${opts[@]}" update > "$apt/update.log" 2>&1 || {
  cat "$apt/update.log" >&2
  echo "tree-sitter-cli.sh: cannot read Debian $suite's package lists" >&2
  exit 1
}
(cd "$apt/debs" && apt-get "${opts[@]}" download tree-sitter-cli libc6 libgcc-s1 > "$apt/download.log" 2>&1) || {
  cat "$apt/download.log" >&2
  echo "tree-sitter-cli.sh: cannot download tree-sitter-cli, libc6 and libgcc-s1 of Debian $suite" >&2
  exit 1
}
for d in "$apt/debs"/*.deb; do dpkg-deb -x "$d" "$dir/root"; done
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2> /dev/null || gcc -print-multiarch)
lib=$dir/root/usr/lib/$arch
loader=$(find "$lib" -maxdepth 1 -name 'ld-linux*.so.*' | head -1)
[ -n "$loader" ] && [ -x "$dir/root/usr/bin/tree-sitter" ] || {
  echo "tree-sitter-cli.sh: the packages lack the program or the loader ($lib)" >&2
  exit 1
}
cat > "$dir/tree-sitter" << EOF
#!/bin/sh
# Debian $suite's tree-sitter with its own C library (scripts/tree-sitter-cli.sh)
exec "$loader" --library-path "$lib" "$dir/root/usr/bin/tree-sitter" "\$@"
EOF
chmod +x "$dir/tree-sitter"
rm -rf "$apt/cache" "$apt/lists" "$apt/debs"
"$dir/tree-sitter" --version > /dev/null || {
  echo "tree-sitter-cli.sh: $dir/tree-sitter does not run" >&2
  exit 1
}
echo "tree-sitter-cli.sh: $("$dir/tree-sitter" --version) in $dir"
