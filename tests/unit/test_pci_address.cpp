#include <catch2/catch.hpp>

#include "gpudirect/pci_address.hpp"

#include <algorithm>
#include <vector>

using gpudirect::PciAddress;

TEST_CASE("PciAddress parses both the full and the short form", "[pci_address]") {
  const PciAddress full = PciAddress::parse("0000:06:00.0");
  CHECK(full.domain == 0);
  CHECK(full.bus == 0x06);
  CHECK(full.device == 0);
  CHECK(full.function == 0);
  CHECK(PciAddress::parse("06:00.0") == full);
  const PciAddress odd = PciAddress::parse("00AB:8E:1f.7");
  CHECK(odd.domain == 0xab);
  CHECK(odd.bus == 0x8e);
  CHECK(odd.device == 0x1f);
  CHECK(odd.function == 7);
  CHECK(odd.to_string() == "00ab:8e:1f.7");
}

TEST_CASE("PciAddress formats with a four-digit domain, wider when needed", "[pci_address]") {
  CHECK(PciAddress::parse("8e:00.1").to_string() == "0000:8e:00.1");
  CHECK(PciAddress::parse("10000:00:02.0").to_string() == "10000:00:02.0");  // Intel VMD domain
  CHECK(PciAddress{0xffffffffU, 0xff, 0x1f, 7}.to_string() == "ffffffff:ff:1f.7");
}

TEST_CASE("PciAddress orders by domain, bus, device, function", "[pci_address]") {
  std::vector<PciAddress> addresses;
  for (const char* text : {"0001:00:00.0", "0000:86:00.0", "0000:06:00.1", "0000:06:00.0", "0000:06:01.0"})
    addresses.push_back(PciAddress::parse(text));
  std::sort(addresses.begin(), addresses.end());
  std::vector<std::string> sorted;
  for (const auto& a : addresses) sorted.push_back(a.to_string());
  CHECK(sorted == std::vector<std::string>{"0000:06:00.0", "0000:06:00.1", "0000:06:01.0", "0000:86:00.0", "0001:00:00.0"});
  CHECK(PciAddress::parse("06:00.0") != PciAddress::parse("06:00.1"));
}

TEST_CASE("PciAddress rejects malformed text and says what it expected", "[pci_address]") {
  for (const char* bad : {"", "06", "06:00", "0000:100:00.0", "0000:06:20.0", "0000:06:00.8", "zz:00.0", "0000:06:00.", ":06:00.0",
                          "0000:06:00.00", "1:2:06:00.0", "0x00:06:00.0", "+6:00.0", "06:00.0 ", "123456789:06:00.0", "0000:-1:00.0"}) {
    INFO(bad);
    CHECK_THROWS_WITH(PciAddress::parse(bad),
                      Catch::Contains("invalid PCI address '" + std::string(bad) + "'") && Catch::Contains("e.g. 0000:06:00.0"));
  }
}
