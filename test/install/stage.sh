#!/bin/sh
# stage.sh BUILD STAGE VERSION LIBDIR: `cmake --install` into an empty
# staging prefix, then checks the layout an embedder and a packager rely on
# and that the installed tkc runs from there.
set -eu
build=$1 stage=$2 version=$3 libdir=$4
major=${version%%.*}
rm -rf "$stage"
cmake --install "$build" --prefix "$stage" > /dev/null
status=0
for f in bin/tkc "$libdir/libtk.so.$version" include/tk/tk.h "$libdir/pkgconfig/tk.pc" \
         "$libdir/cmake/tk/tkConfig.cmake" "$libdir/cmake/tk/tkConfigVersion.cmake" \
         "$libdir/cmake/tk/tkTargets.cmake" share/man/man1/tkc.1; do
  [ -f "$stage/$f" ] || { echo "FAIL: $f is not installed"; status=1; }
done
[ "$(readlink "$stage/$libdir/libtk.so.$major")" = "libtk.so.$version" ] ||
  { echo "FAIL: $libdir/libtk.so.$major is not a link to libtk.so.$version"; status=1; }
[ "$(readlink "$stage/$libdir/libtk.so")" = "libtk.so.$major" ] ||
  { echo "FAIL: $libdir/libtk.so is not a link to libtk.so.$major"; status=1; }
out=$(env -u LD_LIBRARY_PATH "$stage/bin/tkc" --version) || { echo "FAIL: installed tkc does not run"; status=1; }
[ "$out" = "tkc $version" ] || { echo "FAIL: installed tkc --version says '$out'"; status=1; }
[ $status -eq 0 ] && { echo "stage: installed into $stage:"; (cd "$stage" && find . ! -type d | sort | sed 's/^/  /'); }
exit $status
