#!/bin/sh
# check_exports.sh LIBTK TK_H GCC: libtk exports exactly the functions that
# tk.h declares, each at version TK_<major>, and nothing else (no internal
# names, no LLVM, no C++ runtime). The declarations come from the compiler
# (gcc -aux-info), not from the pattern the build uses to write the version
# script, so a declaration that pattern misses shows up here. The one other
# dynamic symbol allowed is the version node itself (absolute, e.g. TK_0),
# which GNU ld adds for symbol versioning.
set -eu
lib=$1 header=$2 gcc=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '#include "tk/tk.h"\n' > "$tmp/probe.c"
"$gcc" -fsyntax-only -aux-info "$tmp/aux.txt" -I"$(dirname "$(dirname "$header")")" "$tmp/probe.c"
grep -F "/tk/tk.h:" "$tmp/aux.txt" | grep -v ' static ' |
  grep -oE '[ *]tk_[A-Za-z0-9_]+ \(' | sed -E 's/^[ *]//; s/ \($//' | sort -u > "$tmp/declared"

nm -D --defined-only "$lib" > "$tmp/nm"
awk '$2 != "A" { print $3 }' "$tmp/nm" | sed 's/@.*//' | sort -u > "$tmp/exported"
awk '$2 == "A" { print $3 }' "$tmp/nm" | sort -u > "$tmp/nodes"
# every exported function carries the version node
awk '$2 != "A" { print $3 }' "$tmp/nm" | grep -v '@@TK_[0-9][0-9]*$' > "$tmp/unversioned" || true

status=0
if [ "$(wc -l < "$tmp/declared")" -lt 10 ]; then
  echo "FAIL: found only $(wc -l < "$tmp/declared") declarations in $header"; status=1
fi
if ! cmp -s "$tmp/declared" "$tmp/exported"; then
  echo "FAIL: exported symbols of $lib differ from the functions declared in $header"
  echo "  declared, not exported:"; comm -23 "$tmp/declared" "$tmp/exported" | sed 's/^/    /'
  echo "  exported, not declared:"; comm -13 "$tmp/declared" "$tmp/exported" | sed 's/^/    /'
  status=1
fi
if ! grep -qx 'TK_[0-9][0-9]*' "$tmp/nodes" || grep -vqx 'TK_[0-9][0-9]*' "$tmp/nodes"; then
  echo "FAIL: absolute symbols other than one version node TK_<n>:"; sed 's/^/    /' "$tmp/nodes"
  status=1
fi
if [ -s "$tmp/unversioned" ]; then
  echo "FAIL: symbols without the version node:"; sed 's/^/    /' "$tmp/unversioned"
  status=1
fi
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
case "$soname" in
  libtk.so.[0-9]*) ;;
  *) echo "FAIL: SONAME is '$soname', not libtk.so.<major>"; status=1 ;;
esac
[ $status -eq 0 ] && echo "exports: $(wc -l < "$tmp/exported") functions of tk.h at $(cat "$tmp/nodes"), SONAME $soname, nothing else"
exit $status
