# SPDX-License-Identifier: Apache-2.0
# `cmake --install`: the SystemC IP blocks as a CMake package (docs/systemc.md).
#   find_package(tpuemu REQUIRED)
#   target_link_libraries(app PRIVATE tpuemu::systemc)   # a C++17 target
# tpuemu::systemc brings the C++17 headers of sim/tlm/include/tpuemu/tlm, SystemC (found with
# pkg-config by the package's config file, as the build finds it) and the static libraries: the
# SystemC modules, the core and timing models, the RtlCore library and the Verilated cores with
# the Verilator runtime objects (all in tpuemu_rtl_models).
# Every rule is in the component `systemc`: `cmake --install BUILD --component systemc` installs
# the package alone (the CLI's rules are in the default component).
include(CMakePackageConfigHelpers)

set(tpuemu_package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/tpuemu)
# The exported names, tpuemu::<name>.
set_target_properties(tpuemu_tlm_rtl PROPERTIES EXPORT_NAME tlm_rtl)
set_target_properties(tpuemu_tlm_rtl_model PROPERTIES EXPORT_NAME tlm_rtl_model)
set_target_properties(tpuemu_tlm_systemc PROPERTIES EXPORT_NAME tlm_systemc)
set_target_properties(tpuemu_tlm_model PROPERTIES EXPORT_NAME tlm_model)
set_target_properties(tpuemu_rtl_models PROPERTIES EXPORT_NAME rtl_models)
set_target_properties(tpuemu_tlm_timing PROPERTIES EXPORT_NAME tlm_timing)
set_target_properties(tpuemu_dram PROPERTIES EXPORT_NAME dram)
install(TARGETS tpuemu_systemc tpuemu_tlm_rtl tpuemu_tlm_rtl_model tpuemu_tlm_systemc tpuemu_tlm_model
                tpuemu_tlm_timing tpuemu_dram tpuemu_rtl_models
  EXPORT tpuemuTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT systemc
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The C++17 headers: every one of include/tpuemu/tlm except the C++20 ones (the tlm backend's
# CoreSim, the HBM model's own headers; hbm_target.h is their C++17 door).
file(GLOB tpuemu_tlm_headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/sim/tlm/include/tpuemu/tlm/*.h)
foreach(cxx20_header tlm_core_sim.h hbm_timing.h hbm_beat_timing.h)
  list(REMOVE_ITEM tpuemu_tlm_headers ${PROJECT_SOURCE_DIR}/sim/tlm/include/tpuemu/tlm/${cxx20_header})
endforeach()
install(FILES ${tpuemu_tlm_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tpuemu/tlm COMPONENT systemc)
# The clocked-core interface every model of the core implements (C++17, from sim/include).
install(FILES ${PROJECT_SOURCE_DIR}/sim/include/tpuemu/sim/clocked_core.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tpuemu/sim COMPONENT systemc)

install(EXPORT tpuemuTargets NAMESPACE tpuemu:: DESTINATION ${tpuemu_package_dir} COMPONENT systemc)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tpuemuConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/tpuemuConfig.cmake INSTALL_DESTINATION ${tpuemu_package_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/tpuemuConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/tpuemuConfig.cmake ${PROJECT_BINARY_DIR}/cmake/tpuemuConfigVersion.cmake
  DESTINATION ${tpuemu_package_dir} COMPONENT systemc)
