# Run by the install_consumer test (cmake -P). Installs BUILD_DIR into a scratch
# prefix under WORK_DIR, checks that only public headers were installed, then
# configures, builds and runs the consumer project against that prefix.

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
