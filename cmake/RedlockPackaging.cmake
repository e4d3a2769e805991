# Debian packages with CPack (`cpack -G DEB` in a build directory), one per install
# component (cmake/RedlockInstall.cmake):
#   libredlock<SOVERSION>             the shared library
#   libredlock-dev                    headers, libredlock.so link, libredlock.a, CMake and
#                                     pkg-config files
#   redlock                           the command-line tool and its man page
#   libredlock-prometheus<SOVERSION>  redlock::prometheus (when prometheus-cpp is found)
#   libredlock-prometheus-dev         its header, link, CMake and pkg-config files
#   libredlock-testing-dev            redlock::testing, the fault kit for tests (when built:
#                                     with the tests or REDLOCK_INSTALL_TESTING)
# Build with -DBUILD_SHARED_LIBS=ON -DCMAKE_INSTALL_PREFIX=/usr for packages that install
# like Debian's own (libraries under /usr/lib/<multiarch>). A RelWithDebInfo or Debug
# build also makes -dbgsym packages with the debug symbols; a Release build has none to
# keep, and its binaries are stripped all the same. The package_deb test runs lintian on
# every package it makes.
include(GNUInstallDirs)

set(CPACK_PACKAGE_NAME redlock)
set(CPACK_PACKAGE_VENDOR "redlock")
set(CPACK_PACKAGE_CONTACT "redlock maintainers <maintainers@redlock.invalid>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack would put it before each package's own
# synopsis (CPACK_DEBIAN_<COMPONENT>_DESCRIPTION below).
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/redlock/redlock")
# dpkg-shlibdeps turns the libraries the binaries load into Depends (libuv1, libhiredis0.14,
# libssl3, libc6, libstdc++6, libprometheus-cpp-core1.0); the packages between ours come
# from the component dependencies below.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
# Our own libraries are in this build, not installed yet.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/lib/client
                                                ${PROJECT_BINARY_DIR}/prometheus)
# A shlibs file (with the ldconfig trigger) for every library package.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
if(CMAKE_BUILD_TYPE MATCHES "^(RelWithDebInfo|Debug)$")
  set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)  # strips, keeping the symbols in -dbgsym
else()
  set(CPACK_STRIP_FILES ON)
endif()

# name|component|section|synopsis|what the package holds
set(_redlock_packages
  "libredlock${REDLOCK_SOVERSION}|library|libs|distributed locks over Redis masters - library|This package holds the shared library."
  "libredlock-dev|development|libdevel|distributed locks over Redis masters - development|This package holds the headers, the static library, the CMake package and the\npkg-config files.")
if(REDLOCK_BUILD_TOOLS)
  list(APPEND _redlock_packages
    "redlock|tool|utils|distributed flock(1) over Redis masters|This package holds the redlock command: it runs a command while holding a lock\n(like flock), or takes, extends, releases and inspects locks from scripts.")
endif()
if(TARGET redlock_prometheus)
  list(APPEND _redlock_packages
    "libredlock-prometheus${REDLOCK_SOVERSION}|prometheus_library|libs|distributed locks over Redis masters - Prometheus metrics|This package holds the shared library of redlock::prometheus, the client's\nobserver as Prometheus metrics (prometheus-cpp)."
    "libredlock-prometheus-dev|prometheus_development|libdevel|distributed locks over Redis masters - Prometheus metrics, development|This package holds the header, the CMake component and the pkg-config file of\nredlock::prometheus.")
endif()

if(TARGET redlock_testing)
  list(APPEND _redlock_packages
    "libredlock-testing-dev|testing_development|libdevel|distributed locks over Redis masters - fault kit for tests|This package holds redlock::testing, a static library with its headers, CMake\ncomponent and pkg-config file: it starts real redis-server processes for a\nprogram's tests (standalone masters, Sentinel groups, Redis Clusters) and\npauses, kills, restarts, fails over, cuts off, slows down or sets the clock\nof each one.")
endif()

# Every package carries the machine-readable copyright and a Debian changelog in its
# /usr/share/doc directory, as Debian policy asks.
set(_redlock_changelog ${PROJECT_BINARY_DIR}/packaging/changelog)
string(TIMESTAMP _redlock_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(WRITE ${_redlock_changelog}
  "redlock (${PROJECT_VERSION}) unstable; urgency=medium\n\n"
  "  * Built with CPack from the redlock sources (CHANGELOG.md lists the changes).\n\n"
  " -- ${CPACK_PACKAGE_CONTACT}  ${_redlock_date}\n")
execute_process(COMMAND gzip -9nf ${_redlock_changelog})

set(CPACK_COMPONENTS_ALL "")
foreach(_redlock_package IN LISTS _redlock_packages)
  string(REPLACE "|" ";" _redlock_package "${_redlock_package}")
  list(GET _redlock_package 0 _name)
  list(GET _redlock_package 1 _component)
  list(GET _redlock_package 2 _section)
  list(GET _redlock_package 3 _synopsis)
  list(GET _redlock_package 4 _holds)
  string(TOUPPER ${_component} _upper)
  list(APPEND CPACK_COMPONENTS_ALL ${_component})
  set(CPACK_DEBIAN_${_upper}_PACKAGE_NAME ${_name})
  set(CPACK_DEBIAN_${_upper}_PACKAGE_SECTION ${_section})
  set(CPACK_DEBIAN_${_upper}_DESCRIPTION
      "${_synopsis}\nRedlock for C++20: a lock held by a majority of N independent Redis masters,\nwith fencing tokens, semaphores, read-write locks and key sets.\n.\n${_holds}")
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/copyright ${_redlock_changelog}.gz
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${_name} COMPONENT ${_component})
endforeach()

# The public headers include none of hiredis, libuv or OpenSSL, so building against the
# shared library needs none of their -dev packages; linking the static archive does
# (pkg-config --static redlock-static, find_package COMPONENTS static): they are
# suggested, as is Asio for redlock/asio.hpp.
# The library packages use dpkg's ldconfig trigger (a `triggers` control file) rather than
# the ldconfig calls CPack would write into postinst and postrm; those scripts, given
# here, then have nothing to do.
foreach(_script IN ITEMS triggers postinst postrm)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/library.${_script}
                 ${PROJECT_BINARY_DIR}/packaging/library/${_script} COPYONLY)
  list(APPEND _redlock_library_control ${PROJECT_BINARY_DIR}/packaging/library/${_script})
endforeach()
# lintian rightly sees them as empty; the override says why, in each library package.
foreach(_redlock_library IN ITEMS library:libredlock${REDLOCK_SOVERSION}
                                  prometheus_library:libredlock-prometheus${REDLOCK_SOVERSION})
  string(REPLACE ":" ";" _redlock_library "${_redlock_library}")
  list(GET _redlock_library 0 _component)
  list(GET _redlock_library 1 _name)
  if(NOT _component IN_LIST CPACK_COMPONENTS_ALL)
    continue()
  endif()
  set(_override ${PROJECT_BINARY_DIR}/packaging/lintian/${_name})
  file(WRITE ${_override}
    "# CPack writes ldconfig calls into postinst and postrm unless a package brings its own\n"
    "# scripts; ours do nothing because the package's triggers file runs ldconfig.\n"
    "${_name}: maintainer-script-empty [postinst]\n"
    "${_name}: maintainer-script-empty [postrm]\n")
  install(FILES ${_override} DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides
          COMPONENT ${_component})
endforeach()
set(CPACK_DEBIAN_LIBRARY_PACKAGE_CONTROL_EXTRA ${_redlock_library_control})
set(CPACK_DEBIAN_PROMETHEUS_LIBRARY_PACKAGE_CONTROL_EXTRA ${_redlock_library_control})
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_COMPONENT_DEVELOPMENT_DEPENDS library)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SUGGESTS
    "libhiredis-dev, libuv1-dev, libssl-dev, pkg-config, libasio-dev")
set(CPACK_COMPONENT_TOOL_DEPENDS library)
# redlock/prometheus.hpp includes prometheus-cpp's headers: its -dev package is needed.
set(CPACK_COMPONENT_PROMETHEUS_LIBRARY_DEPENDS library)
set(CPACK_COMPONENT_PROMETHEUS_DEVELOPMENT_DEPENDS development prometheus_library)
set(CPACK_DEBIAN_PROMETHEUS_DEVELOPMENT_PACKAGE_DEPENDS "prometheus-cpp-dev")
# The kit is an archive that links libuv and hiredis, and runs redis-server (redis-cli for
# cluster members); it needs no libredlock (its users add libredlock-dev for the client they
# test).
set(CPACK_DEBIAN_TESTING_DEVELOPMENT_PACKAGE_DEPENDS "libuv1-dev, libhiredis-dev")
set(CPACK_DEBIAN_TESTING_DEVELOPMENT_PACKAGE_RECOMMENDS "redis-server, redis-tools, libredlock-dev")

include(CPack)
