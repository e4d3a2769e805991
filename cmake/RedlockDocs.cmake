# The API reference with Doxygen (Debian: doxygen), when it is installed: the target
# redlock-docs (not part of `all`), and with the tests the api_docs test, which fails on
# any Doxygen warning, an undocumented public symbol included.
find_program(REDLOCK_DOXYGEN doxygen)
set(REDLOCK_DOCS_OUTPUT ${PROJECT_BINARY_DIR}/docs/api)
configure_file(${PROJECT_SOURCE_DIR}/docs/Doxyfile.in ${PROJECT_BINARY_DIR}/docs/Doxyfile @ONLY)
if(REDLOCK_DOXYGEN)
  add_custom_target(redlock-docs
    COMMAND ${CMAKE_COMMAND} -E make_directory ${REDLOCK_DOCS_OUTPUT}
    COMMAND ${REDLOCK_DOXYGEN} ${PROJECT_BINARY_DIR}/docs/Doxyfile
    COMMENT "API reference: ${REDLOCK_DOCS_OUTPUT}/html/index.html"
    VERBATIM)
endif()
if(REDLOCK_BUILD_TESTS)
  if(REDLOCK_DOXYGEN)
    add_test(NAME api_docs
      COMMAND sh -c "mkdir -p '${REDLOCK_DOCS_OUTPUT}' && '${REDLOCK_DOXYGEN}' '${PROJECT_BINARY_DIR}/docs/Doxyfile'")
  else()
    add_test(NAME api_docs
      COMMAND sh -c "echo 'doxygen not found (apt-get install doxygen, or scripts/setup --profile test)'; exit 1")
  endif()
  set_tests_properties(api_docs PROPERTIES LABELS unit TIMEOUT 120)
endif()
