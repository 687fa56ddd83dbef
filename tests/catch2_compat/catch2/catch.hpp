// Catch2 3 (Debian 13 ships 3.7) under the Catch2 2 names the tests use: this header's name, the
// string matchers Catch::Contains/StartsWith/EndsWith, and Approx. tests/CMakeLists.txt puts this
// directory on the include path only when it found Catch2 3; with Catch2 2 its own catch.hpp is used.
#pragma once

#include <catch2/catch_all.hpp>
#include <string>

namespace Catch {

inline Matchers::StringContainsMatcher Contains(const std::string& text, CaseSensitive sensitivity = CaseSensitive::Yes) {
  return Matchers::ContainsSubstring(text, sensitivity);
}
using Matchers::EndsWith;
using Matchers::StartsWith;

}  // namespace Catch

using Catch::Approx;
