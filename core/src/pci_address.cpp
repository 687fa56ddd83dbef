#include "gpudirect/pci_address.hpp"

#include <charconv>
#include <cstdio>
#include <stdexcept>
#include <vector>

namespace gpudirect {
namespace {

std::uint32_t parse_hex_field(std::string_view field, std::uint32_t max, std::string_view whole) {
  std::uint32_t value = 0;
  const char* end = field.data() + field.size();
  auto [ptr, ec] = std::from_chars(field.data(), end, value, 16);
  if (field.empty() || ec != std::errc{} || ptr != end || value > max)
    throw std::invalid_argument("invalid PCI address '" + std::string(whole) +
                                "': expected DOMAIN:BUS:DEVICE.FUNCTION in hex, e.g. 0000:06:00.0");
  return value;
}

}  // namespace

PciAddress PciAddress::parse(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ':') {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (parts.size() == 2) parts.insert(parts.begin(), std::string_view("0"));
  if (parts.size() != 3) parse_hex_field("", 0, text);
  const std::string_view dev_fn = parts[2];
  const auto dot = dev_fn.find('.');
  if (dot == std::string_view::npos) parse_hex_field("", 0, text);
  PciAddress address;
  address.domain = parse_hex_field(parts[0], 0xffff, text);
  address.bus = parse_hex_field(parts[1], 0xff, text);
  address.device = parse_hex_field(dev_fn.substr(0, dot), 0x1f, text);
  address.function = parse_hex_field(dev_fn.substr(dot + 1), 0x7, text);
  return address;
}

std::string PciAddress::to_string() const {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return buffer;
}

}  // namespace gpudirect
