# Writes the text of IN as a C string array named NAME into OUT, so the
# installed library needs no template files.  Run with cmake -P.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" len)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}" "/* generated from ${IN_NAME} by cmake/embed.cmake */\nconst char ${NAME}[] = {\n${bytes}0x00};\n")
