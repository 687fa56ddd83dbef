#include <catch2/catch.hpp>

#include "gpudirect/cpuset.hpp"

#include <sched.h>

using gpudirect::CpuSet;

TEST_CASE("CPU lists parse and print in canonical form", "[cpuset]") {
  CHECK(CpuSet::parse_list("0-51,104-155").to_list() == "0-51,104-155");
  CHECK(CpuSet::parse_list("0-51,104-155").count() == 104);
  CHECK(CpuSet::parse_list("7,3,1,2,2").to_list() == "1-3,7");
  CHECK(CpuSet::parse_list("0-3,4-7").to_list() == "0-7");
  CHECK(CpuSet::parse_list("5-5").to_list() == "5");
  CHECK(CpuSet::parse_list("0-3\n").to_list() == "0-3");  // as read from /sys/.../cpulist
  CHECK(CpuSet::parse_list("").empty());
  CHECK(CpuSet::parse_list("65535").contains(65535));
  CHECK(CpuSet().to_list().empty());
}

TEST_CASE("CPU lists reject bad input quoting it", "[cpuset]") {
  for (const char* bad : {"1-", "-1", "3-1", "1,,2", "a", "1,", ",1", "1-2-3", "0x3", "65536", "99999999999", "1 ,2"}) {
    INFO(bad);
    CHECK_THROWS_WITH(CpuSet::parse_list(bad), Catch::Contains("invalid CPU list '" + std::string(bad) + "'"));
  }
}

TEST_CASE("CpuSet reads hex masks in the kernel and NCCL forms", "[cpuset]") {
  CHECK(CpuSet::parse_hex_mask("3").to_list() == "0-1");
  CHECK(CpuSet::parse_hex_mask("0x00000003").to_list() == "0-1");
  CHECK(CpuSet::parse_hex_mask("00000001,00000000").to_list() == "32");
  CHECK(CpuSet::parse_hex_mask("ffffffff,ffffffff").to_list() == "0-63");
  CHECK(CpuSet::parse_hex_mask("ff,00000001").to_list() == "0,32-39");
  CHECK(CpuSet::parse_hex_mask("1,1").to_list() == "0,32");  // short groups are still 32 bits each
  CHECK(CpuSet::parse_hex_mask("00000000,00000000").empty());
  // A3 Mega NUMA node 0 as NCCL writes it: CPUs 0-51 and 104-155.
  CHECK(CpuSet::parse_hex_mask("0fffffff,ffffff00,00000000,000fffff,ffffffff").to_list() == "0-51,104-155");
  CHECK(CpuSet::parse_hex_mask("F0\n").to_list() == "4-7");
}

TEST_CASE("hex masks reject bad input quoting it", "[cpuset]") {
  for (const char* bad : {"", "0x", "xyz", "12g4", ",ff", "ff,", "ff,,ff", "123456789", "zz,ffff", "-1"}) {
    INFO(bad);
    CHECK_THROWS_WITH(CpuSet::parse_hex_mask(bad), Catch::Contains("invalid CPU mask '" + std::string(bad) + "'"));
  }
  // 2049 groups of ffffffff would name CPU 65536 and above.
  std::string huge = "1";
  for (int i = 0; i < 2048; ++i) huge += ",00000000";
  CHECK_THROWS_WITH(CpuSet::parse_hex_mask(huge), Catch::Contains("above 65535"));
}

TEST_CASE("hex mask output round-trips", "[cpuset]") {
  for (const char* list : {"0", "0-51,104-155", "31-32", "63,64", "200", "0-207"}) {
    INFO(list);
    const CpuSet set = CpuSet::parse_list(list);
    CHECK(CpuSet::parse_hex_mask(set.to_hex_mask()) == set);
  }
  CHECK(CpuSet::parse_list("0,32").to_hex_mask() == "1,00000001");
  CHECK(CpuSet().to_hex_mask() == "0");
}

TEST_CASE("set algebra, membership and equality", "[cpuset]") {
  const CpuSet a = CpuSet::parse_list("0-7");
  const CpuSet b = CpuSet::parse_list("4-11,300");
  CHECK((a & b).to_list() == "4-7");
  CHECK((a | b).to_list() == "0-11,300");
  CHECK((b | a) == (a | b));
  CHECK((a & CpuSet::parse_list("300")).empty());
  CHECK((a & CpuSet::parse_list("300")) == CpuSet());  // no trailing zero words left behind
  CHECK(b.contains(300));
  CHECK_FALSE(b.contains(299));
  CHECK_FALSE(b.contains(-1));
  CHECK_FALSE(b.contains(1 << 20));
  CHECK(b.cpus() == std::vector<int>{4, 5, 6, 7, 8, 9, 10, 11, 300});
  CpuSet c;
  c.insert(63);
  c.insert(64);
  CHECK(c.to_list() == "63-64");
  CHECK_THROWS_AS(c.insert(-1), std::invalid_argument);
  CHECK_THROWS_AS(c.insert(CpuSet::kMaxCpus), std::invalid_argument);
  CHECK(CpuSet::range(2, 4).to_list() == "2-4");
  CHECK_THROWS_AS(CpuSet::range(4, 2), std::invalid_argument);
}

TEST_CASE("glibc cpu_set_t conversion, dynamic size", "[cpuset]") {
  CpuSet::Native native;
  CpuSet::parse_list("1,200,1500").to_cpu_set(native);
  REQUIRE(native.set != nullptr);
  CHECK(native.size >= CPU_ALLOC_SIZE(1501));
  CHECK(CPU_COUNT_S(native.size, native.set) == 3);
  CHECK(CPU_ISSET_S(1500, native.size, native.set));
  CHECK(CpuSet::from_cpu_set(native.set, native.size).to_list() == "1,200,1500");

  CpuSet::Native small;
  CpuSet::parse_list("0").to_cpu_set(small);
  CHECK(small.size >= sizeof(cpu_set_t));  // room for glibc's default 1024 CPUs
  CpuSet().to_cpu_set(small);              // reusing a Native frees and reallocates
  CHECK(CPU_COUNT_S(small.size, small.set) == 0);

  // What sched_getaffinity reports for this process round-trips.
  CpuSet::Native mine;
  CpuSet::range(0, 0).to_cpu_set(mine);
  REQUIRE(sched_getaffinity(0, mine.size, mine.set) == 0);
  const CpuSet allowed = CpuSet::from_cpu_set(mine.set, mine.size);
  CHECK(allowed.count() == CPU_COUNT_S(mine.size, mine.set));
  CHECK(allowed.count() >= 1);
}
