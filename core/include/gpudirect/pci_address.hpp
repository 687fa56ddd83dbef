// A PCI address (domain:bus:device.function), the key every topology source agrees on.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpudirect {

struct PciAddress {
  std::uint32_t domain = 0;
  std::uint32_t bus = 0;
  std::uint32_t device = 0;
  std::uint32_t function = 0;

  // Accepts "0000:06:00.0" and "06:00.0" (domain 0), hex, any case. Throws std::invalid_argument.
  static PciAddress parse(std::string_view text);
  std::string to_string() const;  // "0000:06:00.0"

  auto operator<=>(const PciAddress&) const = default;
};

}  // namespace gpudirect
