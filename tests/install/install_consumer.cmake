# Run by the install_consumer test (cmake -P). Installs BUILD_DIR into a scratch
# prefix under WORK_DIR, checks that only public headers were installed, then
# configures, builds and runs the consumer project against that prefix, and builds and
# runs the same program with the flags of the installed redlock.pc.

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
message(STATUS "installed into ${prefix}")

# lib/ is private: the only headers a user gets are include/redlock/*.hpp.
file(GLOB_RECURSE headers RELATIVE "${prefix}/include" "${prefix}/include/*")
if(NOT headers)
  message(FATAL_ERROR "no headers were installed under ${prefix}/include")
endif()
foreach(h IN LISTS headers)
  if(NOT h MATCHES "^redlock/[a-z_]+\\.hpp$")
    message(FATAL_ERROR "a private or unexpected file was installed: include/${h}")
  endif()
endforeach()
list(LENGTH headers count)
message(STATUS "${count} public headers installed")

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
    -DREDLOCK_VERSION=${REDLOCK_VERSION})
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/app")
message(STATUS "consumer says:\n${last_output}")

# The same program built with pkg-config, as a Makefile project would: redlock.pc must
# lead to the installed headers and, with --static, to every library the archive needs.
file(GLOB_RECURSE pc_files "${prefix}/*/redlock.pc")
if(NOT pc_files)
  message(FATAL_ERROR "redlock.pc was not installed under ${prefix}")
endif()
list(GET pc_files 0 pc_file)
cmake_path(GET pc_file PARENT_PATH pc_dir)
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
run(pkg-config --modversion redlock)
string(STRIP "${last_output}" pc_version)
if(NOT pc_version STREQUAL REDLOCK_VERSION)
  message(FATAL_ERROR "redlock.pc says version ${pc_version}, the build is ${REDLOCK_VERSION}")
endif()
run(pkg-config --static --cflags --libs redlock)
string(STRIP "${last_output}" pc_flags)
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
separate_arguments(extra UNIX_COMMAND "${EXTRA_FLAGS}")
run(${CXX_COMPILER} -std=c++20 -Wall -Wextra -Werror ${extra} -o "${WORK_DIR}/pkg-config-app"
    "${CONSUMER_DIR}/main.cpp" ${pc_flags})
run("${WORK_DIR}/pkg-config-app")
message(STATUS "the pkg-config build says:\n${last_output}")
