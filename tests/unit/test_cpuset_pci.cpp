#include <catch2/catch.hpp>

#include "gpudirect/cpuset.hpp"
#include "gpudirect/pci_address.hpp"

using gpudirect::CpuSet;
using gpudirect::PciAddress;

TEST_CASE("PCI addresses parse, format and order", "[pci]") {
  CHECK(PciAddress::parse("0000:06:00.0").to_string() == "0000:06:00.0");
  CHECK(PciAddress::parse("8e:00.1").to_string() == "0000:8e:00.1");
  CHECK(PciAddress::parse("0001:8E:1f.7").to_string() == "0001:8e:1f.7");
  CHECK(PciAddress::parse("0000:06:00.0") < PciAddress::parse("0000:86:00.0"));
  CHECK(PciAddress::parse("0000:ff:00.0") < PciAddress::parse("0001:00:00.0"));
  for (const char* bad : {"", "06", "06:00", "0000:100:00.0", "0000:06:20.0", "0000:06:00.8", "zz:00.0", "0000:06:00.", ":06:00.0"})
    CHECK_THROWS_WITH(PciAddress::parse(bad), Catch::Contains("invalid PCI address"));
}

TEST_CASE("CPU lists round-trip", "[cpuset]") {
  CHECK(CpuSet::parse_list("0-51,104-155").to_list() == "0-51,104-155");
  CHECK(CpuSet::parse_list("3,1,2,7").to_list() == "1-3,7");
  CHECK(CpuSet::parse_list("5").count() == 1);
  CHECK(CpuSet::parse_list("").empty());
  for (const char* bad : {"1-", "-1", "3-1", "1,,2", "a", "1,", "99999999"})
    CHECK_THROWS_AS(CpuSet::parse_list(bad), std::invalid_argument);
}

TEST_CASE("hex masks as the kernel and NCCL write them", "[cpuset]") {
  CHECK(CpuSet::parse_hex_mask("3").to_list() == "0-1");
  CHECK(CpuSet::parse_hex_mask("0x00000003").to_list() == "0-1");
  CHECK(CpuSet::parse_hex_mask("00000001,00000000").to_list() == "32");
  CHECK(CpuSet::parse_hex_mask("ffffffff,ffffffff").to_list() == "0-63");
  CHECK(CpuSet::parse_hex_mask("f0").to_list() == "4-7");
  for (const char* bad : {"", "0x", "xyz", "12g4"}) CHECK_THROWS_AS(CpuSet::parse_hex_mask(bad), std::invalid_argument);
}

TEST_CASE("set algebra and cpu_set_t conversion", "[cpuset]") {
  const CpuSet a = CpuSet::parse_list("0-7");
  const CpuSet b = CpuSet::parse_list("4-11");
  CHECK((a & b).to_list() == "4-7");
  CHECK((a | b).to_list() == "0-11");
  CHECK((a & CpuSet::parse_list("100")).empty());
  CpuSet::Native native;
  CpuSet::parse_list("1,200,1500").to_cpu_set(native);
  CHECK(CpuSet::from_cpu_set(native.set, native.size).to_list() == "1,200,1500");
}
