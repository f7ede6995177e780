# SPDX-License-Identifier: Apache-2.0
# Embeds a text file in the build as a C++ function returning it: a file that is code in another
# language (the report page's JavaScript) stays a real file that its own tools check (node
# --check), and the binary still carries it, so tpuemu needs no file beside it at run time.
#
#   cmake -DINPUT=<file> -DOUTPUT=<file.cpp> -DFUNCTION=<name> -DNAMESPACE=<ns> [-DHEADER=<h>]
#         -P embed_text.cmake
#
# writes OUTPUT defining `std::string_view NAMESPACE::FUNCTION()`, whose text is INPUT without its
# leading `//` comment lines (the licence line and the file's description belong to the source,
# not to what the program writes out). OUTPUT is rewritten only when its text changes.
# tpuemu_embed_text() in cmake/tpuemu_embed.cmake runs this at build time.
foreach(arg INPUT OUTPUT FUNCTION NAMESPACE)
  if(NOT DEFINED ${arg})
    message(FATAL_ERROR "embed_text.cmake: -D${arg}=... is missing")
  endif()
endforeach()

file(READ "${INPUT}" text)
string(REGEX REPLACE "^(//[^\n]*\n)+" "" text "${text}")
# A raw string literal ends at its delimiter: the text must not contain it.
set(delimiter "tpuemu_embed")
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT}: contains ')${delimiter}\"', the end of the raw string it is "
                      "embedded in; choose another delimiter in ${CMAKE_CURRENT_LIST_FILE}")
endif()

set(include "")
if(DEFINED HEADER)
  set(include "#include \"${HEADER}\"\n\n")
endif()
set(code "// Generated at build time by cmake/embed_text.cmake from ${INPUT}: edit that file.\n")
string(APPEND code "${include}#include <string_view>\n\nnamespace ${NAMESPACE} {\n\n")
string(APPEND code "std::string_view ${FUNCTION}() {\n  return R\"${delimiter}(${text})${delimiter}\";\n}\n\n")
string(APPEND code "}  // namespace ${NAMESPACE}\n")

set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL code)
  file(WRITE "${OUTPUT}" "${code}")
endif()
