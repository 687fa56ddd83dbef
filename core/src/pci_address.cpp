#include "gpudirect/pci_address.hpp"

#include <charconv>
#include <cstdio>
#include <stdexcept>

namespace gpudirect {
namespace {

[[noreturn]] void reject(std::string_view text, std::string_view why) {
  throw std::invalid_argument("invalid PCI address '" + std::string(text) + "' (" + std::string(why) +
                              "): expected DOMAIN:BUS:DEVICE.FUNCTION or BUS:DEVICE.FUNCTION in hex, "
                              "e.g. 0000:06:00.0");
}

// One hex field of 1..max_digits digits, at most max_value; nothing else (no sign, no 0x).
std::uint32_t hex_field(std::string_view field, std::size_t max_digits, std::uint32_t max_value, std::string_view name,
                        std::string_view text) {
  if (field.empty() || field.size() > max_digits) reject(text, std::string(name) + " has the wrong number of digits");
  std::uint32_t value = 0;
  const char* end = field.data() + field.size();
  const auto [ptr, ec] = std::from_chars(field.data(), end, value, 16);
  if (ec != std::errc{} || ptr != end) reject(text, std::string(name) + " is not hex");
  if (value > max_value) reject(text, std::string(name) + " is out of range");
  return value;
}

}  // namespace

PciAddress PciAddress::parse(std::string_view text) {
  const auto dot = text.rfind('.');
  if (dot == std::string_view::npos) reject(text, "no '.' before the function");
  const std::string_view head = text.substr(0, dot);  // [domain:]bus:device
  const auto last_colon = head.rfind(':');
  if (last_colon == std::string_view::npos) reject(text, "no ':' between bus and device");
  const std::string_view bus_part = head.substr(0, last_colon);
  const auto first_colon = bus_part.rfind(':');
  PciAddress address;
  if (first_colon != std::string_view::npos) address.domain = hex_field(bus_part.substr(0, first_colon), 8, 0xffffffffU, "domain", text);
  address.bus = hex_field(bus_part.substr(first_colon == std::string_view::npos ? 0 : first_colon + 1), 2, 0xff, "bus", text);
  address.device = hex_field(head.substr(last_colon + 1), 2, 0x1f, "device", text);
  address.function = hex_field(text.substr(dot + 1), 1, 0x7, "function", text);
  return address;
}

std::string PciAddress::to_string() const {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return buffer;
}

}  // namespace gpudirect
