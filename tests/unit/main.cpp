// The unit tests' main: Catch2 2's from its header; Catch2 3 links its own
// (Catch2::Catch2WithMain, tests/CMakeLists.txt).
#ifndef DDPCTL_CATCH2_V3
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#endif
