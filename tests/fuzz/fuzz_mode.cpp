// The --gpu-direct value a user types: parse_mode_request.
#include "fuzz_input.hpp"

#include "gpudirect/mode.hpp"

#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string value = gpudirect::fuzz::as_text(data, size);
  try {
    const auto request = gpudirect::parse_mode_request(value);
    if (request.mode) (void)gpudirect::to_string(*request.mode);
  } catch (const std::invalid_argument& error) {
    // Refusals quote a bounded prefix of the value: a huge value must not make a huge message.
    if (std::string(error.what()).size() > 1024) __builtin_trap();
  }
  return 0;
}
