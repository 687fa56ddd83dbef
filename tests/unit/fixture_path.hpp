// The path of a file under tests/fixtures/, for every unit test that reads one.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace gpudirect::testing {

// Joined by std::filesystem rather than `std::string(DIR) + "/" + name`: the directory's length
// changes with the checkout, and GCC 12 warns falsely (-Warray-bounds, an error here) about the
// inlined concatenation of a literal at some lengths.
inline std::string fixture_path(std::string_view name) { return (std::filesystem::path(GPUDIRECT_FIXTURE_DIR) / name).string(); }

}  // namespace gpudirect::testing
