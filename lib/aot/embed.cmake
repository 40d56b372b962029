# embed.cmake: writes OUTPUT, a C file defining `const char NAME[]` that
# holds the bytes of INPUT and a final NUL (how libtk carries lib/aot/
# prelude.h, the text every AOT header begins with).
#   cmake -DINPUT=file -DOUTPUT=file.c -DNAME=symbol -P embed.cmake
file(READ ${INPUT} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
get_filename_component(from ${INPUT} NAME)
file(WRITE ${OUTPUT}
  "/* Generated from ${from} by embed.cmake: do not edit. */\n"
  "extern const char ${NAME}[];\n"
  "const char ${NAME}[] = {\n${bytes}0x00};\n")
