# Run by the subproject_consumer test (cmake -P): configures the parent project of
# subproject/ with BUILD_TESTING=OFF and BUILD_SHARED_LIBS=ON, then checks that redlock
# left the parent alone: no test but the parent's own, no install rule, no CPack
# configuration, no word about test targets. Configuring only: the shared library build
# itself is the package_deb test's.

include(${CMAKE_CURRENT_LIST_DIR}/run.cmake)

file(REMOVE_RECURSE "${WORK_DIR}")
set(build "${WORK_DIR}/build")
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/install/subproject" -B "${build}"
    -DREDLOCK_SOURCE_DIR=${SOURCE_DIR} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DBUILD_TESTING=OFF -DBUILD_SHARED_LIBS=ON)
set(configure_output "${last_output}")
message(STATUS "configured the parent in ${build}")

if(configure_output MATCHES "(asio_test|_test\\b|building [a-z_-]+ and)")
  message(FATAL_ERROR "the configure output speaks of targets that are off:\n${configure_output}")
endif()
if(EXISTS "${build}/CPackConfig.cmake" OR EXISTS "${build}/CPackSourceConfig.cmake")
  message(FATAL_ERROR "redlock wrote a CPack configuration into the parent's build")
endif()
run(ctest --test-dir "${build}" -N)
if(NOT last_output MATCHES "Total Tests: 1\n" OR NOT last_output MATCHES "parent_test")
  message(FATAL_ERROR "the parent should list only its own test:\n${last_output}")
endif()
# Nothing is built: any install rule of redlock would fail on its missing library.
run(${CMAKE_COMMAND} --install "${build}" --prefix "${WORK_DIR}/prefix")
file(GLOB_RECURSE installed "${WORK_DIR}/prefix/*")
if(installed)
  message(FATAL_ERROR "the parent's install holds files of redlock: ${installed}")
endif()
message(STATUS "redlock added no test, install rule or packaging to its parent")
