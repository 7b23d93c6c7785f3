#pragma once
// Catch2 3 (Debian 13 and later) or Catch2 2 (Debian 12), whichever
// tests/CMakeLists.txt found: the tests are written once, with version 2's
// names (Catch::Contains, Approx), which this header gives version 3 too.
#ifdef DDPCTL_CATCH2_V3
#include <string>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

namespace Catch {
inline Matchers::StringContainsMatcher Contains(const std::string& s, CaseSensitive cs = CaseSensitive::Yes) {
  return Matchers::ContainsSubstring(s, cs);
}
using Matchers::EndsWith;
using Matchers::StartsWith;
}  // namespace Catch
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
