include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Three components, one per Debian package (cmake/RedlockPackaging.cmake): `library` is
# the shared object users' programs load, `development` everything to build against it
# (headers, the .so link or the static archive, CMake and pkg-config files), `tool` the
# redlock command (tools/CMakeLists.txt).
install(TARGETS redlock EXPORT redlockTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library
                NAMELINK_COMPONENT development
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/redlock DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT development)
install(FILES ${PROJECT_BINARY_DIR}/include/redlock/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/redlock COMPONENT development)
install(EXPORT redlockTargets NAMESPACE redlock:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/redlock
        COMPONENT development)

# A shared libredlock brings its dependencies along (the dynamic loader finds them); the
# static archive leaves them to the consumer's link, so the package config looks them up.
if(BUILD_SHARED_LIBS)
  set(REDLOCK_CONFIG_STATIC OFF)
else()
  set(REDLOCK_CONFIG_STATIC ON)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/redlockConfig.cmake.in
  ${PROJECT_BINARY_DIR}/redlockConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/redlock)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/redlockConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/redlockConfig.cmake ${PROJECT_BINARY_DIR}/redlockConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/redlock COMPONENT development)

# redlock.pc finds its prefix from its own place (${pcfiledir}), so that the same file
# works after `cmake --install --prefix` anywhere, from a .deb, and unpacked elsewhere.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(REDLOCK_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(REDLOCK_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH REDLOCK_PC_UP "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  string(REGEX REPLACE "/$" "" REDLOCK_PC_UP "${REDLOCK_PC_UP}")
  set(REDLOCK_PC_PREFIX "\${pcfiledir}/${REDLOCK_PC_UP}")
  set(REDLOCK_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(REDLOCK_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(REDLOCK_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/redlock.pc.in ${PROJECT_BINARY_DIR}/redlock.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/redlock.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT development)
