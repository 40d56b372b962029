# exports.cmake: writes the linker version script of libtk.so from
# include/tk/tk.h, so the exported symbols are exactly the functions the
# public header declares and cannot drift from it.
#   cmake -DHEADER=include/tk/tk.h -DOUTPUT=tk.map -DNODE=TK_0 -P exports.cmake
# A declaration is a line that starts with its return type and names a tk_
# function before the first '('; static inline helpers and typedefs are not
# symbols. Every name goes in one version node (TK_<SONAME major>), all else
# is local: internal names, LLVM and the C++ runtime of the bundle.
file(READ "${HEADER}" text)
string(REGEX MATCHALL "\n[A-Za-z_][^\n(]*[ *]tk_[A-Za-z0-9_]+[ \t]*\\(" decls "${text}")
set(names "")
foreach(d IN LISTS decls)
  string(STRIP "${d}" d)
  if(d MATCHES "^(static|typedef|#)")
    continue()
  endif()
  string(REGEX MATCH "tk_[A-Za-z0-9_]+[ \t]*\\($" name "${d}")
  string(REGEX REPLACE "[ \t]*\\($" "" name "${name}")
  list(APPEND names "${name}")
endforeach()
list(REMOVE_DUPLICATES names)
list(SORT names)
list(LENGTH names n)
if(n EQUAL 0)
  message(FATAL_ERROR "exports.cmake: no tk_ function declarations found in ${HEADER}")
endif()
set(out "/* Generated from ${HEADER} by lib/package/exports.cmake. */\n${NODE} {\n  global:\n")
foreach(name IN LISTS names)
  string(APPEND out "    ${name};\n")
endforeach()
string(APPEND out "  local:\n    *;\n};\n")
file(WRITE "${OUTPUT}" "${out}")
