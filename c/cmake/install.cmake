# Install rules: headers, both libraries, mpk.pc, and a relocatable CMake package.
include(CMakePackageConfigHelpers)

set(MPK_INSTALL_TARGETS mpk)
if(MPK_BUILD_SHARED)
  list(APPEND MPK_INSTALL_TARGETS mpk_shared)
endif()

if(MPK_BUILD_TOOLS)
  install(TARGETS mpk_tool RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(TARGETS ${MPK_INSTALL_TARGETS} EXPORT mpkTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT mpkTargets NAMESPACE mpk:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mpk)
configure_package_config_file(cmake/mpkConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/mpkConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mpk)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/mpkConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/mpkConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/mpkConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mpk)

# mpk.pc finds its prefix from where it lies (${pcfiledir}), so `cmake --install --prefix` anywhere works.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(MPK_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  string(REPLACE "/" ";" MPK_PC_PARTS "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
  set(MPK_PC_PREFIX "\${pcfiledir}")
  foreach(part IN LISTS MPK_PC_PARTS)
    string(APPEND MPK_PC_PREFIX "/..")
  endforeach()
endif()
configure_file(cmake/mpk.pc.in ${CMAKE_CURRENT_BINARY_DIR}/mpk.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/mpk.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
