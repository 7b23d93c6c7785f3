# Writes OUT (a header) with ddpctl's version and the git commit it is built
# from, rewriting it only when that changes (no rebuild otherwise). Run at
# build time (src/CMakeLists.txt), so a new commit shows without reconfiguring.
#   cmake -DSOURCE=<tree> -DOUT=<header> -DVERSION=<x.y.z> -P version.cmake
set(commit "unknown")
find_program(GIT git)
if(GIT AND EXISTS "${SOURCE}/.git")
  execute_process(COMMAND "${GIT}" -C "${SOURCE}" describe --always --dirty --abbrev=12 --match=NONE
    OUTPUT_VARIABLE described RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0 AND described)
    set(commit "${described}")
  endif()
endif()
set(text "// Written by cmake/version.cmake at build time.\n#define DDPCTL_VERSION \"${VERSION}\"\n#define DDPCTL_COMMIT \"${commit}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
