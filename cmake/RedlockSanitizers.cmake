# REDLOCK_SANITIZE=address,undefined or =thread instruments every target of this
# build (including tests), so a sanitizer build is a separate build directory.
if(REDLOCK_SANITIZE)
  set(_flags -fsanitize=${REDLOCK_SANITIZE} -fno-omit-frame-pointer -g)
  if(REDLOCK_SANITIZE MATCHES "undefined")
    list(APPEND _flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options(${_flags})
  add_link_options(-fsanitize=${REDLOCK_SANITIZE})
  message(STATUS "redlock: sanitizers ${REDLOCK_SANITIZE}")
endif()
