include(GoogleTest)

# The compile options of every test's own code.
function(redlock_test_options target)
  redlock_warnings(${target})
  # A test's own code gains nothing from -O3 (the library it drives keeps it) and costs a
  # third more compile time than at -O1, on every CI run's Release build.
  if(CMAKE_BUILD_TYPE STREQUAL "Release")
    target_compile_options(${target} PRIVATE -O1)
  endif()
  # Most tests reach hiredis and libuv, whose pkg-config flags define _FILE_OFFSET_BITS
  # (which changes the standard headers): all of them get the flags, so that one
  # precompiled header fits every test.
  target_link_libraries(${target} PRIVATE PkgConfig::HIREDIS PkgConfig::LIBUV)
endfunction()

# GoogleTest, GoogleMock and the standard headers the tests share, parsed once per build
# instead of once per test file: about 3 s of compiler time per file, a hundred test
# files, three builds on every CI run. Made on first use, with the options every test has.
function(redlock_test_pch)
  if(TARGET redlock_test_pch)
    return()
  endif()
  add_library(redlock_test_pch OBJECT ${PROJECT_SOURCE_DIR}/tests/support/precompiled.cpp)
  redlock_test_options(redlock_test_pch)
  target_link_libraries(redlock_test_pch PRIVATE GTest::gtest GTest::gmock Threads::Threads)
  target_precompile_headers(redlock_test_pch PRIVATE
    <gtest/gtest.h> <gmock/gmock.h>
    <algorithm> <atomic> <chrono> <cstdint> <cstdio> <cstdlib> <cstring> <filesystem>
    <fstream> <functional> <map> <memory> <mutex> <optional> <set> <sstream> <string>
    <string_view> <thread> <unordered_map> <utility> <vector>)
endfunction()

# redlock_add_test(NAME name SOURCES a.cpp ... LABELS unit|integration|chaos [LIBS ...] [TIMEOUT s]
#                  [INTERNAL] [NET])
# One test executable per area, registered with CTest so `ctest -L <label>` selects it.
# The label `parallel` marks a test that waits far more than it computes and judges no
# deadline under a second, or one that takes the resource lock fault_timing (the chaos
# scenarios, the timed failovers) to run beside those only: scripts/test runs the
# parallel tests two at a time, the others alone.
# The common dependencies are keywords rather than copied lists:
#   INTERNAL  the test includes private headers of lib/ ("client/...", "net/...")
#   NET       the test drives the connection layer alone: lib/net with the scripts and
#             the core it needs, hiredis and libuv (implies INTERNAL)
#   NO_PCH    the test's compile options differ from the others' (a precompiled header
#             is only valid for the options it was made with), or GCC 12 warns wrongly
#             about it with the header (the family of GCC bug 105329)
function(redlock_add_test)
  cmake_parse_arguments(T "INTERNAL;NET;NO_PCH" "NAME;TIMEOUT" "SOURCES;LABELS;LIBS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  redlock_test_options(${T_NAME})
  if(NOT T_NO_PCH)
    redlock_test_pch()
    target_precompile_headers(${T_NAME} REUSE_FROM redlock_test_pch)
  endif()
  if(T_NET)
    list(APPEND T_LIBS redlock_net redlock_scripts redlock_core PkgConfig::HIREDIS
         PkgConfig::LIBUV)
    set(T_INTERNAL TRUE)
  endif()
  if(T_INTERNAL)
    target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/lib)
    # Private code is hidden in a shared libredlock; the archive keeps every symbol.
    list(TRANSFORM T_LIBS REPLACE "^redlock$" redlock_static)
  endif()
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main Threads::Threads)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  # One CTest entry per executable (not per TEST) keeps fixture start-up costs shared
  # across the tests of an area.
  add_test(NAME ${T_NAME} COMMAND ${T_NAME} --gtest_color=no)
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
endfunction()

# redlock_tsan_libuv_suppressions(test)
# Under ThreadSanitizer (REDLOCK_SANITIZE=thread), runs `test` with
# tests/tsan-libuv.supp, which says why: descriptors libuv closes are invisible to TSan,
# so a number reused on another thread reads as a race. Only the fault kit's tests need
# it (their proxies' loops run beside the main thread's file system calls). The other
# options are those scripts/test exports for the suite.
function(redlock_tsan_libuv_suppressions test)
  if(REDLOCK_SANITIZE MATCHES "thread")
    set(options "halt_on_error=1:second_deadlock_stack=1")
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT
      "TSAN_OPTIONS=${options}:suppressions=${PROJECT_SOURCE_DIR}/tests/tsan-libuv.supp")
  endif()
endfunction()
