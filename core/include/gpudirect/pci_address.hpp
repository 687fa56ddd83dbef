// A PCI address (domain:bus:device.function), the key every topology source agrees on.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpudirect {

struct PciAddress {
  std::uint32_t domain = 0;    // 16 bits on most hosts; Intel VMD domains go above 0xffff
  std::uint32_t bus = 0;       // 0x00-0xff
  std::uint32_t device = 0;    // 0x00-0x1f
  std::uint32_t function = 0;  // 0-7

  // Accepts "0000:06:00.0" and "06:00.0" (domain 0), hex digits in either case.
  // Throws std::invalid_argument naming the text and the expected form.
  static PciAddress parse(std::string_view text);
  std::string to_string() const;  // "0000:06:00.0"

  // Ordered by (domain, bus, device, function): the order lspci, NVML and Slurm list devices in.
  auto operator<=>(const PciAddress&) const = default;
};

}  // namespace gpudirect
