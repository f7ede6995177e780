# SPDX-License-Identifier: Apache-2.0
# tpuemu_embed_text(<target> INPUT <file> FUNCTION <name> NAMESPACE <ns> [HEADER <header>]):
# compiles <file> into <target> as `std::string_view <ns>::<name>()` returning its text (without
# its leading `//` comment lines), regenerated whenever the file changes (cmake/embed_text.cmake).
function(tpuemu_embed_text target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "INPUT;FUNCTION;NAMESPACE;HEADER" "")
  get_filename_component(input ${arg_INPUT} ABSOLUTE)
  set(output ${CMAKE_CURRENT_BINARY_DIR}/embedded_${arg_FUNCTION}.cpp)
  set(header_arg "")
  if(arg_HEADER)
    set(header_arg -DHEADER=${arg_HEADER})
  endif()
  add_custom_command(OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DOUTPUT=${output} -DFUNCTION=${arg_FUNCTION}
            -DNAMESPACE=${arg_NAMESPACE} ${header_arg} -P ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
    DEPENDS ${input} ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
    COMMENT "Embedding ${arg_INPUT} as ${arg_NAMESPACE}::${arg_FUNCTION}()"
    VERBATIM)
  target_sources(${target} PRIVATE ${output})
endfunction()
