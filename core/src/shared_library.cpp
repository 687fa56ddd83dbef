#include "gpudirect/shared_library.hpp"

#include <dlfcn.h>

#include <algorithm>

#include "gpudirect/text.hpp"

namespace gpudirect {

std::vector<std::string> library_names(std::string_view first, std::span<const std::string_view> fallbacks) {
  std::vector<std::string> names;
  if (!first.empty()) names.emplace_back(first);
  for (const auto name : fallbacks)
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) names.emplace_back(name);
  return names;
}

OpenedLibrary open_first_library(const std::vector<std::string>& names, int flags) {
  OpenedLibrary opened;
  std::vector<std::string> failures;
  for (const auto& name : names) {
    if (void* handle = dlopen(name.c_str(), flags)) {
      opened.handle = handle;
      opened.name = name;
      return opened;
    }
    const char* why = dlerror();  // glibc's starts with the name: "libx.so.2: cannot open shared object file: ..."
    failures.push_back(why ? std::string(why) : name + ": unknown error");
  }
  opened.error = names.empty() ? std::string("no library name to load")
                               : "cannot load any of " + join(names, ", ") + " (" + join(failures, "; ") + ")";
  return opened;
}

}  // namespace gpudirect
