include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Install components, one per Debian package (cmake/RedlockPackaging.cmake): `library`
# is the shared object users' programs load, `development` everything to build against it
# (headers, the .so link, the static archive, CMake and pkg-config files), `tool` the
# redlock command (tools/CMakeLists.txt), and `prometheus_library` and
# `prometheus_development` the same two for redlock::prometheus.
#
# One install holds both libraries, as libuv's and hiredis's do: libredlock.so.N for
# redlock::redlock and the plain pkg-config line, libredlock.a for redlock::redlock_static
# and redlock-static.pc.
set(_redlock_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/redlock)
install(TARGETS redlock_shared EXPORT redlockTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library
                NAMELINK_COMPONENT development
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS redlock_static EXPORT redlockStaticTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The kit's headers go with the kit, not with the library.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/redlock DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT development
        PATTERN testing EXCLUDE
        PATTERN testing.hpp EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/include/redlock/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/redlock COMPONENT development)
install(EXPORT redlockTargets NAMESPACE redlock:: DESTINATION ${_redlock_cmake_dir}
        COMPONENT development)
install(EXPORT redlockStaticTargets NAMESPACE redlock:: DESTINATION ${_redlock_cmake_dir}
        COMPONENT development)

if(TARGET redlock_prometheus)
  install(TARGETS redlock_prometheus EXPORT redlockPrometheusTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT prometheus_development
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT prometheus_library
                  NAMELINK_COMPONENT prometheus_development
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/prometheus/include/redlock/prometheus.hpp
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/redlock COMPONENT prometheus_development)
  install(EXPORT redlockPrometheusTargets NAMESPACE redlock:: DESTINATION ${_redlock_cmake_dir}
          COMPONENT prometheus_development)
  get_target_property(_redlock_prometheus_type redlock_prometheus TYPE)
  if(_redlock_prometheus_type STREQUAL "STATIC_LIBRARY" AND NOT BUILD_SHARED_LIBS)
    set(REDLOCK_CONFIG_PROMETHEUS_STATIC ON)
  else()
    set(REDLOCK_CONFIG_PROMETHEUS_STATIC OFF)
  endif()
endif()

if(TARGET redlock_testing)
  install(TARGETS redlock_testing EXPORT redlockTestingTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT testing_development
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/include/redlock/testing.hpp
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/redlock COMPONENT testing_development)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/redlock/testing
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/redlock COMPONENT testing_development)
  install(EXPORT redlockTestingTargets NAMESPACE redlock:: DESTINATION ${_redlock_cmake_dir}
          COMPONENT testing_development)
  # Preloaded into redis-server, never linked: where the kit looks for it by default.
  install(TARGETS redlock_fakeclock
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/redlock COMPONENT testing_development)
endif()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/redlockConfig.cmake.in
  ${PROJECT_BINARY_DIR}/redlockConfig.cmake
  INSTALL_DESTINATION ${_redlock_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/redlockConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/redlockConfig.cmake ${PROJECT_BINARY_DIR}/redlockConfigVersion.cmake
        DESTINATION ${_redlock_cmake_dir} COMPONENT development)

# The .pc files find their prefix from their own place (${pcfiledir}), so that the same
# file works after `cmake --install --prefix` anywhere, from a .deb, and unpacked elsewhere.
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
foreach(_redlock_pc IN ITEMS redlock redlock-static)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${_redlock_pc}.pc.in
                 ${PROJECT_BINARY_DIR}/${_redlock_pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${_redlock_pc}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)
endforeach()
if(TARGET redlock_prometheus)
  if(REDLOCK_CONFIG_PROMETHEUS_STATIC)
    set(REDLOCK_PC_PROMETHEUS_BASE redlock-static)
  else()
    set(REDLOCK_PC_PROMETHEUS_BASE redlock)
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/redlock-prometheus.pc.in
                 ${PROJECT_BINARY_DIR}/redlock-prometheus.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/redlock-prometheus.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT prometheus_development)
endif()
if(TARGET redlock_testing)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/redlock-testing.pc.in
                 ${PROJECT_BINARY_DIR}/redlock-testing.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/redlock-testing.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT testing_development)
endif()
