# REDLOCK_SANITIZE=address,undefined or =thread instruments every target of this
# build (including tests), so a sanitizer build is a separate build directory.
if(REDLOCK_SANITIZE)
  set(_flags -fsanitize=${REDLOCK_SANITIZE} -fno-omit-frame-pointer)
  # A report needs file and line in its stacks. Debug and RelWithDebInfo bring their own
  # debug information (scripts/test's TSan build asks for line tables only, -g1, which
  # is all a stack needs and much cheaper to compile optimised); the others get -g.
  if(NOT CMAKE_BUILD_TYPE MATCHES "^(Debug|RelWithDebInfo)$")
    list(APPEND _flags -g)
  endif()
  if(REDLOCK_SANITIZE MATCHES "undefined")
    list(APPEND _flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options(${_flags})
  add_link_options(-fsanitize=${REDLOCK_SANITIZE})
  message(STATUS "redlock: sanitizers ${REDLOCK_SANITIZE}")
endif()
