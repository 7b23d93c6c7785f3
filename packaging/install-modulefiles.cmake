# Run by `cmake --install` (and cpack): writes the Lmod and Tcl modulefiles
# for the prefix being installed into, under $DESTDIR.
#   SOURCE, VERSION: set by the install(CODE) line in CMakeLists.txt
set(dir "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/share/ddpctl/modulefiles/ddpctl")
set(PREFIX "${CMAKE_INSTALL_PREFIX}")
configure_file("${SOURCE}/packaging/ddpctl.lua.in" "${dir}/${VERSION}.lua" @ONLY)
configure_file("${SOURCE}/packaging/ddpctl.tcl.in" "${dir}/${VERSION}" @ONLY)
message(STATUS "Installing: ${dir}/${VERSION}.lua and ${dir}/${VERSION}")
