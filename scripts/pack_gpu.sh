#!/usr/bin/env bash
# pack_gpu.sh BUILD_DIR DEST: copies what a GPU run needs from a bundle build
# (configured with -DTK_BUNDLE=ON) into DEST, keeping the build's layout:
# libtk.so with its versioned names (libtk.so -> libtk.so.0 -> libtk.so.X.Y.Z),
# tkc, and the example, test and benchmark programs. Object files and the
# rest of the build stay behind, so DEST is small enough to carry to a
# machine with a GPU but no LLVM; so do the C unit tests, which link libtk's
# internals statically and LLVM as a shared library (run them where LLVM is).
set -euo pipefail
build=$1
dest=$2
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$dest"
mkdir -p "$dest/build"
cp -P "$build"/libtk.so "$build"/libtk.so.[0-9]* "$dest/build/"
cp "$build/tkc" "$dest/build/"
for d in examples test/conformance test/gpu bench; do
  [ -d "$build/$d" ] || continue
  mkdir -p "$dest/build/$d"
  find "$build/$d" -maxdepth 1 -type f \( -perm -u+x -o -name "*.tk" \) -exec cp {} "$dest/build/$d/" \;
done
du -sh "$dest"
