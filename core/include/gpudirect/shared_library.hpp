// Loading a shared library whose soname differs between releases (libxml2 is libxml2.so.2 up to
// 2.13 and libxml2.so.16 from 2.14): try the soname the build found first, then the other names
// with the same ABI for what we call, and say every name tried when none loads.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpudirect {

// `first` (may be empty), then each of `fallbacks` not already listed.
std::vector<std::string> library_names(std::string_view first, std::span<const std::string_view> fallbacks);

struct OpenedLibrary {
  void* handle = nullptr;  // from dlopen; never closed by this code
  std::string name;        // the name that loaded
  std::string error;       // when handle is null: "cannot load any of A, B (A: why; B: why)"
};

// dlopen(name, flags) for each name in order; the first that loads wins.
OpenedLibrary open_first_library(const std::vector<std::string>& names, int flags);

}  // namespace gpudirect
