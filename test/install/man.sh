#!/bin/sh
# man.sh PAGE TKC VERSION: the manual page renders through man(1) without
# groff warnings, names the version, and covers every option `tkc --help`
# lists (so the page cannot quietly fall behind the command).
set -eu
page=$1 tkc=$2 version=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$page" "$tmp/tkc.1"
cd "$tmp"
LC_ALL=C MANWIDTH=80 man ./tkc.1 2> man.err | col -b > man.txt || true
status=0
if [ -s man.err ] || ! grep -q '^NAME' man.txt || ! grep -q 'tkc  *- compile' man.txt; then
  echo "FAIL: man ./tkc.1 does not render:"; cat man.err; head -n 20 man.txt; status=1
fi
LC_ALL=C groff -man -Tutf8 -ww -z tkc.1 2> groff.err || true
if [ -s groff.err ]; then echo "FAIL: groff warns:"; cat groff.err; status=1; fi
grep -q "^\.TH TKC 1 .*\"tk $version\"" tkc.1 || { echo "FAIL: .TH does not say tk $version"; status=1; }
"$tkc" --help > help.txt 2>&1 || true
for opt in $(grep -oE '(^|[ ,])--?[a-zA-Z][a-zA-Z0-9-]*' help.txt | sed -E 's/^[ ,]//' | sort -u); do
  case $opt in -O0|-O3) continue ;; esac
  grep -qF -- "$opt" man.txt || { echo "FAIL: $opt of tkc --help is not in the page"; status=1; }
done
[ $status -eq 0 ] && echo "man: tkc.1 renders ($(wc -l < man.txt) lines) and covers tkc --help"
exit $status
