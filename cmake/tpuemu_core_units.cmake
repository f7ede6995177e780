# SPDX-License-Identifier: Apache-2.0
# The code that names each Verilated core, generated at configure time from the one list of presets
# that get a core (TPUEMU_CORE_PRESETS, rtl/CMakeLists.txt). Every Verilated core is its own class
# (Vtpu_<core>, with its own port widths), so each needs a translation unit that instantiates the
# harness for it and a table entry that finds it by preset name; written by hand, both repeated the
# preset list and its DIM. Adding a preset to TPUEMU_CORE_PRESETS is now the only edit.
#
# tpuemu_core_units(UNIT <unit.cpp.in> TABLE <table.h.in> DECLARATION <pattern> ENTRY <pattern>
#                   OUTPUT_DIR <dir> SOURCES <out_var>)
#   For each preset P of TPUEMU_CORE_PRESETS, configures UNIT (name "<stem>.cpp.in") into
#   <dir>/<stem>_<core>.cpp with
#     @PRESET@  the preset's name ("tpu-v4-like"),
#     @CORE@    the name as an identifier, the suffix of its Verilated class ("tpu_v4_like"),
#     @DIM@     the preset's dim (configs/presets/P.json).
#   Then configures TABLE (name "<file>.in") into <dir>/<file> with
#     @CORE_DECLARATIONS@  DECLARATION expanded for each preset, one a line,
#     @CORE_ENTRIES@       ENTRY expanded for each preset, one a line,
#     @CORE_COUNT@         the number of presets.
#   <out_var> receives the units. The table lists the presets in the order of the list.
function(tpuemu_core_units)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "UNIT;TABLE;DECLARATION;ENTRY;OUTPUT_DIR;SOURCES" "")
  get_filename_component(unit_name ${arg_UNIT} NAME)
  if(NOT unit_name MATCHES "^(.+)\\.cpp\\.in$")
    message(FATAL_ERROR "tpuemu_core_units: UNIT ${arg_UNIT} is not a <stem>.cpp.in template")
  endif()
  set(unit_stem ${CMAKE_MATCH_1})
  set(units "")
  set(CORE_DECLARATIONS "")
  set(CORE_ENTRIES "")
  list(LENGTH TPUEMU_CORE_PRESETS CORE_COUNT)
  foreach(PRESET IN LISTS TPUEMU_CORE_PRESETS)
    set(preset_json ${PROJECT_SOURCE_DIR}/configs/presets/${PRESET}.json)
    file(READ ${preset_json} json)
    string(JSON DIM GET "${json}" dim)
    # The same rule as the Verilated class's prefix (rtl/CMakeLists.txt: Vtpu_<core>).
    string(REPLACE "-" "_" CORE ${PRESET})
    configure_file(${arg_UNIT} ${arg_OUTPUT_DIR}/${unit_stem}_${CORE}.cpp @ONLY)
    list(APPEND units ${arg_OUTPUT_DIR}/${unit_stem}_${CORE}.cpp)
    string(CONFIGURE "${arg_DECLARATION}" declaration @ONLY)
    string(CONFIGURE "${arg_ENTRY}" entry @ONLY)
    string(APPEND CORE_DECLARATIONS "${declaration}\n")
    string(APPEND CORE_ENTRIES "${entry}\n")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${preset_json})
  endforeach()
  get_filename_component(table_name ${arg_TABLE} NAME)
  string(REGEX REPLACE "\\.in$" "" table_name ${table_name})
  configure_file(${arg_TABLE} ${arg_OUTPUT_DIR}/${table_name} @ONLY)
  set(${arg_SOURCES} ${units} PARENT_SCOPE)
endfunction()
