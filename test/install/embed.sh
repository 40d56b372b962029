#!/bin/sh
# embed.sh pkgconfig|cmake|clash|static STAGE SOURCE_DIR WORK CC: builds a
# host program against the tk installed in STAGE, the way a user would
# (through pkg-config, through find_package(tk CONFIG), by hand; static:
# find_package and libtk.a), and runs it on the reference interpreter.
set -eu
how=$1 stage=$2 src=$3 work=$4 cc=$5
rm -rf "$work"
mkdir -p "$work"
export TK_INTERPRET=1 TK_CACHE_DISABLE=1
unset LD_LIBRARY_PATH
case $how in
  pkgconfig)
    pcdir=$(dirname "$(find "$stage" -name tk.pc | head -n 1)")
    export PKG_CONFIG_PATH=$pcdir
    # shellcheck disable=SC2046
    "$cc" -std=c11 -Wall -Wextra -Werror -o "$work/host" "$src/host.c" \
      $(pkg-config --cflags --libs tk) -Wl,-rpath,"$(pkg-config --variable=libdir tk)"
    echo "pkg-config: tk $(pkg-config --modversion tk): $(pkg-config --cflags --libs tk)"
    "$work/host"
    ;;
  cmake|static)
    static=OFF
    [ "$how" = static ] && static=ON
    CC=$cc cmake -S "$src/consumer" -B "$work" -G Ninja -DCMAKE_PREFIX_PATH="$stage" \
      -DHOST_STATIC=$static > "$work.log" || { cat "$work.log"; exit 1; }
    cmake --build "$work" > "$work.log" || { cat "$work.log"; exit 1; }
    if [ "$how" = static ] && readelf -d "$work/host" | grep -q 'NEEDED.*libtk'; then
      echo "FAIL: the static host needs libtk.so"; exit 1
    fi
    "$work/host"
    "$work/clash"
    ;;
  clash)
    libdir=$(dirname "$(find "$stage" -name 'libtk.so' | head -n 1)")
    "$cc" -std=c11 -Wall -Wextra -Werror -I"$stage/include" -o "$work/clash" "$src/clash.c" \
      -rdynamic -L"$libdir" -ltk -Wl,-rpath,"$libdir"
    "$work/clash"
    ;;
  *) echo "embed.sh: unknown way '$how'" >&2; exit 2 ;;
esac
