#include "gpudirect/mode.hpp"

#include "gpudirect/text.hpp"

#include <array>
#include <stdexcept>
#include <utility>

namespace gpudirect {
namespace {

constexpr std::array<std::pair<std::string_view, Mode>, 6> kModes{{{"auto", Mode::auto_detect},
                                                                   {"tcpxo", Mode::tcpxo},
                                                                   {"tcpx", Mode::tcpx},
                                                                   {"gib", Mode::gib},
                                                                   {"rdma", Mode::rdma},
                                                                   {"off", Mode::off}}};

[[noreturn]] void reject(std::string_view value) {
  throw std::invalid_argument("invalid --gpu-direct value '" + quote_bounded(value) + "': " + valid_modes_message());
}

}  // namespace

std::string valid_modes_message() {
  return "expected auto, tcpxo, tcpx, gib, rdma or off, optionally followed by ',verbose' and/or ',torch' (e.g. "
         "--gpu-direct=tcpxo,verbose)";
}

std::string_view to_string(Mode mode) {
  for (const auto& [name, value] : kModes)
    if (value == mode) return name;
  return "unknown";
}

Mode parse_mode(std::string_view name) {
  for (const auto& [text, value] : kModes)
    if (text == name) return value;
  reject(name);
}

ModeRequest parse_mode_request(std::string_view value) {
  ModeRequest request;
  std::size_t start = 0;
  bool seen_mode = false;
  while (start <= value.size() && !value.empty()) {
    std::size_t comma = value.find(',', start);
    if (comma == std::string_view::npos) comma = value.size();
    const std::string_view word = value.substr(start, comma - start);
    if (word == "verbose") {
      if (request.verbose) reject(value);
      request.verbose = true;
    } else if (word == "torch") {
      if (request.torch) reject(value);
      request.torch = true;
    } else {
      if (seen_mode || word.empty()) reject(value);
      for (const auto& [text, mode] : kModes)
        if (text == word) request.mode = mode;
      if (!request.mode) reject(value);
      seen_mode = true;
    }
    start = comma + 1;
  }
  return request;
}

}  // namespace gpudirect
