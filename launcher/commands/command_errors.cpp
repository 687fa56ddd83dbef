#include "command_errors.hpp"

#include <cstdio>

namespace gpudirect::launcher {

int usage_or_failure(const std::exception& error) { return dynamic_cast<const UsageError*>(&error) ? kExitUsage : kExitFailure; }

int run_command(std::string_view prefix, const std::function<int()>& body, int (*exit_code_for)(const std::exception&)) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(prefix.size()), prefix.data(), e.what());
    return exit_code_for(e);
  }
}

}  // namespace gpudirect::launcher
