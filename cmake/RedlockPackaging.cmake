# Debian packages with CPack (`cpack -G DEB` in a build directory), one per install
# component (cmake/RedlockInstall.cmake):
#   libredlock<SOVERSION>  the shared library (empty in a static build)
#   libredlock-dev         headers, libredlock.so or libredlock.a, CMake and pkg-config files
#   redlock                the command-line tool
# Build with -DBUILD_SHARED_LIBS=ON -DCMAKE_INSTALL_PREFIX=/usr for packages that install
# like Debian's own (libraries under /usr/lib/<multiarch>).
set(CPACK_PACKAGE_NAME redlock)
set(CPACK_PACKAGE_VENDOR "redlock")
set(CPACK_PACKAGE_CONTACT "redlock maintainers <maintainers@redlock.invalid>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Redlock distributed locks over N independent Redis masters")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_GENERATOR DEB)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL library development)
if(REDLOCK_BUILD_TOOLS)
  list(APPEND CPACK_COMPONENTS_ALL tool)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
# dpkg-shlibdeps turns the libraries the binaries load into Depends (libuv1, libhiredis0.14,
# libssl3, libc6, libstdc++6, and libredlock for the tool).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
# The tool's own libredlock is in this build, not installed yet; its Depends on the
# library package comes from the component dependency below.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/lib/client)

set(CPACK_DEBIAN_LIBRARY_PACKAGE_NAME libredlock${REDLOCK_SOVERSION})
set(CPACK_COMPONENT_LIBRARY_DESCRIPTION "Redlock distributed locks: shared library")

set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libredlock-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEVELOPMENT_DESCRIPTION
    "Redlock distributed locks: headers, CMake package and pkg-config file")
# The CMake package and redlock.pc look these up (a static archive links them).
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS "libhiredis-dev, libuv1-dev, libssl-dev, pkg-config")
if(BUILD_SHARED_LIBS)
  set(CPACK_COMPONENT_DEVELOPMENT_DEPENDS library)
endif()

set(CPACK_DEBIAN_TOOL_PACKAGE_NAME redlock)
set(CPACK_DEBIAN_TOOL_PACKAGE_SECTION utils)
set(CPACK_COMPONENT_TOOL_DESCRIPTION "Redlock distributed locks: the redlock command (a distributed flock)")
if(BUILD_SHARED_LIBS)
  set(CPACK_COMPONENT_TOOL_DEPENDS library)
endif()

include(CPack)
