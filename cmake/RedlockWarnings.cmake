# Warnings are errors on our own targets only; third-party headers come in as SYSTEM.
function(redlock_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wno-missing-field-initializers)
  # GCC 12 at -O2/-O3 reports `"literal" + std::string` as an overlapping memcpy inside
  # libstdc++ (GCC bug 105329, fixed in 13); with -Werror that false positive would fail
  # Release builds on Debian bookworm.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
     AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
endfunction()
