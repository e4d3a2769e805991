# Run by the install_testing_kit test (cmake -P). Installs BUILD_DIR into a scratch prefix
# under WORK_DIR and tests a program with the installed fault kit, as a user would:
# - the kit's headers, archive, CMake component and redlock-testing.pc are installed;
# - a CMake project finds it with find_package(redlock COMPONENTS testing) and builds the
#   two examples of docs/testing-kit.md (extracted here, so the page cannot drift): five
#   standalone members that it locks, pauses, kills and restarts, cuts off and slows
#   down; and five members of three kinds (standalone, a Sentinel group, a cluster) with
#   every fault the kit has, failovers and clock offsets included. Both exit 0;
# - the same programs built with `pkg-config --cflags --libs redlock-testing redlock`;
# - the fake clock, installed beside the archive, is found where the package says.

include(${CMAKE_CURRENT_LIST_DIR}/run.cmake)

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")

foreach(file IN ITEMS include/redlock/testing.hpp include/redlock/testing/fleet.hpp
                      include/redlock/testing/member.hpp lib/libredlock-testing.a
                      lib/redlock/libredlock_fakeclock.so
                      lib/cmake/redlock/redlockTestingTargets.cmake
                      lib/pkgconfig/redlock-testing.pc)
  if(NOT EXISTS "${prefix}/${file}")
    message(FATAL_ERROR "${file} was not installed under ${prefix}")
  endif()
endforeach()
# The fault proxy and the kit's own helpers stay inside the archive.
file(GLOB_RECURSE kit_headers RELATIVE "${prefix}/include" "${prefix}/include/redlock/testing/*")
foreach(h IN LISTS kit_headers)
  if(NOT h MATCHES "^redlock/testing/[a-z_]+\\.hpp$")
    message(FATAL_ERROR "an unexpected file was installed: include/${h}")
  endif()
endforeach()

set(example_dir "${WORK_DIR}/example")
file(MAKE_DIRECTORY "${example_dir}")
run(${CMAKE_COMMAND} -DINPUT=${DOC} -DOUTPUT_DIR=${example_dir} -DEXPECTED=2
    -P ${SOURCE_DIR}/tests/docs/extract_cpp_blocks.cmake)
set(example "${example_dir}/block_1.cpp")
set(faults_example "${example_dir}/block_2.cpp")

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
    -DEXAMPLE=${example}
    -DFAULTS_EXAMPLE=${faults_example})
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/kit_example")
message(STATUS "the CMake consumer of redlock::testing says:\n${last_output}")
# Installed under a scratch prefix, not the one the kit was built for: the variable says
# where, as it would for a user who relocates an install.
set(ENV{REDLOCK_FAKECLOCK} "${prefix}/lib/redlock/libredlock_fakeclock.so")
run("${WORK_DIR}/build/kit_faults_example")
message(STATUS "its fleet of three kinds says:\n${last_output}")

set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig")
set(ENV{LD_LIBRARY_PATH} "${prefix}/lib")
run(pkg-config --variable=fakeclock redlock-testing)
string(STRIP "${last_output}" pc_fakeclock)
file(REAL_PATH "${pc_fakeclock}" pc_fakeclock_real)
file(REAL_PATH "${prefix}/lib/redlock/libredlock_fakeclock.so" installed_fakeclock)
if(NOT pc_fakeclock_real STREQUAL installed_fakeclock)
  message(FATAL_ERROR "pkg-config names the fake clock ${pc_fakeclock}, not ${installed_fakeclock}")
endif()
set(ENV{REDLOCK_FAKECLOCK} "${pc_fakeclock}")
run(pkg-config --cflags --libs redlock-testing redlock)
string(STRIP "${last_output}" pc_flags)
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
separate_arguments(extra UNIX_COMMAND "${EXTRA_FLAGS}")
run(${CXX_COMPILER} -std=c++20 -Wall -Wextra -Werror ${extra} -o "${WORK_DIR}/pc-kit-example"
    "${example}" ${pc_flags})
run("${WORK_DIR}/pc-kit-example")
message(STATUS "the pkg-config build of the same program says:\n${last_output}")
run(${CXX_COMPILER} -std=c++20 -Wall -Wextra -Werror ${extra} -o "${WORK_DIR}/pc-kit-faults-example"
    "${faults_example}" ${pc_flags})
run("${WORK_DIR}/pc-kit-faults-example")
message(STATUS "and of the second:\n${last_output}")
