# Run by the install_consumer test (cmake -P). Installs BUILD_DIR into a scratch
# prefix under WORK_DIR and uses it as a new user would:
# - only public headers, and both libredlock.so and libredlock.a, are installed;
# - a CMake project that sets no C++ standard finds the package and links
#   redlock::redlock (shared) and redlock::redlock_static, and, when the component was
#   built (WITH_PROMETHEUS), redlock::prometheus;
# - the same program built with the plain `pkg-config --cflags --libs redlock` line loads
#   libredlock.so, and with `pkg-config --static ... redlock-static` holds the archive;
# - redlock-prometheus.pc links the Prometheus program.

include(${CMAKE_CURRENT_LIST_DIR}/run.cmake)

# needs(PROGRAM yes|no): whether PROGRAM loads libredlock.so (its DT_NEEDED entries).
function(needs program expected)
  run(readelf -d "${program}")
  if(last_output MATCHES "Shared library: \\[libredlock\\.so")
    set(loads yes)
  else()
    set(loads no)
  endif()
  if(NOT loads STREQUAL expected)
    message(FATAL_ERROR "${program}: loads libredlock.so: ${loads}, expected ${expected}\n${last_output}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
message(STATUS "installed into ${prefix}")

# lib/ is private: the only headers a user gets are include/redlock/*.hpp, and those of
# the fault kit, include/redlock/testing.hpp and include/redlock/testing/*.hpp, when it
# was built (install_testing_kit checks them).
file(GLOB_RECURSE headers RELATIVE "${prefix}/include" "${prefix}/include/*")
if(NOT headers)
  message(FATAL_ERROR "no headers were installed under ${prefix}/include")
endif()
foreach(h IN LISTS headers)
  if(NOT h MATCHES "^redlock/(testing/)?[a-z_]+\\.hpp$")
    message(FATAL_ERROR "a private or unexpected file was installed: include/${h}")
  endif()
endforeach()
list(LENGTH headers count)
message(STATUS "${count} public headers installed")

# One install, both libraries, in the package directory the README names.
foreach(pattern IN ITEMS libredlock.so libredlock.so.*.*.* libredlock.a cmake/redlock/redlockConfig.cmake
                         pkgconfig/redlock.pc pkgconfig/redlock-static.pc)
  file(GLOB found "${prefix}/lib/${pattern}")
  if(NOT found)
    message(FATAL_ERROR "lib/${pattern} was not installed under ${prefix}")
  endif()
endforeach()

if(WITH_TOOL)
  foreach(file IN ITEMS bin/redlock share/man/man1/redlock.1.gz)
    if(NOT EXISTS "${prefix}/${file}")
      message(FATAL_ERROR "the tool was built but ${file} was not installed under ${prefix}")
    endif()
  endforeach()
endif()

if(WITH_PROMETHEUS)
  message(STATUS "redlock::prometheus was built: its CMake and pkg-config consumers are checked")
else()
  message(STATUS "SKIPPED: redlock::prometheus was not built (prometheus-cpp-dev missing), "
                 "so its CMake and pkg-config consumers are not checked")
endif()

# The package registry is off so that only CMAKE_PREFIX_PATH can lead to redlock:
# a consumer that found the build tree instead would prove nothing.
run(${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/build"
    -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    "-DCMAKE_CXX_FLAGS=${EXTRA_FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA_FLAGS}"
    -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
    -DEXPECTED_PREFIX=${prefix}
    -DREDLOCK_VERSION=${REDLOCK_VERSION}
    -DWITH_PROMETHEUS=${WITH_PROMETHEUS})
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
foreach(app IN ITEMS app app_static)
  run("${WORK_DIR}/build/${app}")
  message(STATUS "the CMake consumer ${app} says:\n${last_output}")
endforeach()
needs("${WORK_DIR}/build/app" yes)
needs("${WORK_DIR}/build/app_static" no)
if(WITH_PROMETHEUS)
  run("${WORK_DIR}/build/prometheus_app")
  message(STATUS "the CMake consumer prometheus_app says:\n${last_output}")
endif()

# The same programs built with pkg-config, as a Makefile project would.
set(pc_dir "${prefix}/lib/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
set(ENV{LD_LIBRARY_PATH} "${prefix}/lib")
run(pkg-config --modversion redlock)
string(STRIP "${last_output}" pc_version)
if(NOT pc_version STREQUAL REDLOCK_VERSION)
  message(FATAL_ERROR "redlock.pc says version ${pc_version}, the build is ${REDLOCK_VERSION}")
endif()
run(pkg-config --variable=cxx_std redlock)
string(STRIP "${last_output}" cxx_std)
separate_arguments(extra UNIX_COMMAND "${EXTRA_FLAGS}")

# pc_build(NAME SOURCE pkg-config-arguments...): compiles and runs one program.
function(pc_build name source)
  run(pkg-config ${ARGN})
  string(STRIP "${last_output}" pc_flags)
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  run(${CXX_COMPILER} -std=${cxx_std} -Wall -Wextra -Werror ${extra} -o "${WORK_DIR}/${name}"
      "${CONSUMER_DIR}/${source}" ${pc_flags})
  run("${WORK_DIR}/${name}")
  message(STATUS "the pkg-config build ${name} (pkg-config ${ARGN}) says:\n${last_output}")
endfunction()
pc_build(pc-app main.cpp --cflags --libs redlock)
needs("${WORK_DIR}/pc-app" yes)
pc_build(pc-app-static main.cpp --static --cflags --libs redlock-static)
needs("${WORK_DIR}/pc-app-static" no)
if(WITH_PROMETHEUS)
  pc_build(pc-prometheus-app prometheus_main.cpp --cflags --libs redlock-prometheus)
endif()
