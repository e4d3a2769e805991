include(GoogleTest)

# redlock_add_test(NAME name SOURCES a.cpp ... LABELS unit|integration|chaos [LIBS ...] [TIMEOUT s])
# One test executable per area, registered with CTest so `ctest -L <label>` selects it.
function(redlock_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LABELS;LIBS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  redlock_warnings(${T_NAME})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main Threads::Threads)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  # One CTest entry per executable (not per TEST) keeps fixture start-up costs shared
  # across the tests of an area.
  add_test(NAME ${T_NAME} COMMAND ${T_NAME} --gtest_color=no)
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
endfunction()
