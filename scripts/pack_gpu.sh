#!/usr/bin/env bash
# pack_gpu.sh BUILD_DIR DEST: copies what a GPU run needs from a bundle build
# (configured with -DTK_BUNDLE=ON) into DEST, keeping the build's layout:
# libtk.so, tkc, the example, test and benchmark programs, and the test
# programs. Object files and the rest of the build stay behind, so
# DEST is small enough to carry to a machine with a GPU but no LLVM.
set -euo pipefail
build=$1
dest=$2
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$dest"
mkdir -p "$dest/build"
cp "$build/libtk.so" "$build/tkc" "$dest/build/"
for d in examples test/conformance test/gpu bench; do
  [ -d "$build/$d" ] || continue
  mkdir -p "$dest/build/$d"
  find "$build/$d" -maxdepth 1 -type f \( -perm -u+x -o -name "*.tk" \) -exec cp {} "$dest/build/$d/" \;
done
for f in "$build"/test/unit_*; do
  [ -x "$f" ] && mkdir -p "$dest/build/test" && cp "$f" "$dest/build/test/"
done
du -sh "$dest"
