# compile_in_stage.cmake: compiles SRC with exactly the include path of one
# stage's library (INCS, '|'-separated, from the target's
# INCLUDE_DIRECTORIES) and checks the outcome: EXPECT=pass must compile;
# EXPECT=fail must fail, with MATCH (the header it names) in the message,
# so that a failure for another reason does not count.
#   cmake -DCC=cc -DINCS="a|b" -DSRC=f.c -DEXPECT=fail -DMATCH=codegen/codegen.h -P ...
string(REPLACE "|" ";" dirs "${INCS}")
set(flags "")
foreach(d ${dirs})
  list(APPEND flags "-I${d}")
endforeach()
execute_process(COMMAND ${CC} -std=c11 -D_GNU_SOURCE -fsyntax-only ${flags} ${SRC}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(EXPECT STREQUAL "pass" AND NOT rc EQUAL 0)
  message(FATAL_ERROR "${SRC} should compile in this stage but does not:\n${err}")
elseif(EXPECT STREQUAL "fail")
  if(rc EQUAL 0)
    message(FATAL_ERROR "${SRC} compiled, but it includes a header its stage may not see")
  endif()
  string(FIND "${err}" "${MATCH}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${SRC} failed, but not on ${MATCH}:\n${err}")
  endif()
endif()
