#!/bin/sh
# deb.sh BUILD WORK VERSION: builds the Debian package with CPack, unpacks it
# into an empty root (dpkg -x, as a clean container would hold it) and runs
# the tkc inside, which must find its libtk through the package's own layout.
set -eu
build=$1 work=$2 version=$3
rm -rf "$work"
mkdir -p "$work/root"
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work" > cpack.log 2>&1) ||
  { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/tk_*.deb)
echo "deb: $(basename "$deb")"
dpkg-deb -f "$deb" Package Version Architecture Depends | sed 's/^/  /'
dpkg -x "$deb" "$work/root"
status=0
for f in usr/bin/tkc "usr/lib/libtk.so.$version" usr/lib/libtk.so usr/include/tk/tk.h \
         usr/lib/pkgconfig/tk.pc usr/lib/cmake/tk/tkConfig.cmake usr/share/man/man1/tkc.1; do
  [ -e "$work/root/$f" ] || { echo "FAIL: the package has no /$f"; status=1; }
done
out=$(env -u LD_LIBRARY_PATH "$work/root/usr/bin/tkc" --version) ||
  { echo "FAIL: tkc from the package does not run"; status=1; }
[ "$out" = "tkc $version" ] || { echo "FAIL: tkc --version says '$out'"; status=1; }
[ $status -eq 0 ] && echo "deb: unpacked, $out"
exit $status
