#!/usr/bin/env bash
# check_format.sh [--fix]: the C sources follow .clang-format. Lists every
# tracked .c/.h file of lib/, runtime/, src/, include/, python/src/, examples/
# and test/ that clang-format-19 would change (exit 1), or with --fix
# rewrites them. Exits 77 (skip) where clang-format-19 is not installed.
set -euo pipefail
cd "$(dirname "$0")/.."
cf=$(command -v clang-format-19 || true)
if [ -z "$cf" ]; then
  echo "check_format.sh: clang-format-19 is not installed; skipped"
  exit 77
fi
mapfile -t files < <(git ls-files 'lib/*.[ch]' 'runtime/*.[ch]' 'src/*.[ch]' 'include/*.h' \
                       'python/src/*.[ch]' 'examples/*.[ch]' 'test/*.[ch]')
if [ "${1:-}" = --fix ]; then
  "$cf" -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! "$cf" --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "check_format.sh: $f does not follow .clang-format (scripts/check_format.sh --fix)"
    bad=1
  fi
done
[ $bad = 0 ] && echo "check_format.sh: ${#files[@]} files follow .clang-format"
exit $bad
