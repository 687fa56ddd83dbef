// What every fuzz target shares: the input as text, and the libFuzzer entry point's signature.
// Each target catches only the errors its parser documents; anything else (another exception, a
// crash, a sanitizer report, a hang) is a bug the fuzzer reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace gpudirect::fuzz {

inline std::string as_text(const std::uint8_t* data, std::size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

}  // namespace gpudirect::fuzz
