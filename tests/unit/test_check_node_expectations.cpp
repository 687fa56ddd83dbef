#include <catch2/catch.hpp>

#include "check_node/expectations.hpp"

#include <filesystem>

using namespace gpudirect::launcher::check_node;

TEST_CASE("an expectations file gives each key, unknown values and comments left out", "[check_node]") {
  const Expectations e = parse_expectations(
      "# a comment\n"
      "mode=tcpxo   # fact: a source\n"
      "gpu_count=8\n"
      "gpu_model=H100\n"
      "data_nics=enp6s0, enp7s0\n"
      "data_nic_mtu=8244\n"
      "data_nic_speed_mbps=unknown\n"
      "numa_nodes=2\n",
      "a3-megagpu-8g", "test.conf");
  CHECK(e.machine_type == "a3-megagpu-8g");
  CHECK(e.mode == "tcpxo");
  CHECK(e.gpu_count == 8);
  CHECK(e.gpu_model == "H100");
  CHECK(e.data_nics == std::vector<std::string>{"enp6s0", "enp7s0"});
  CHECK(e.data_nic_mtu == 8244);
  CHECK_FALSE(e.data_nic_speed_mbps.has_value());
  CHECK(e.numa_nodes == 2);
  CHECK_FALSE(e.nvlink_links.has_value());
}

TEST_CASE("a wrong expectations line names the file, the line and what is accepted", "[check_node]") {
  CHECK_THROWS_WITH(parse_expectations("gpu_count=8\ngpus=8\n", "t", "t.conf"), Catch::Contains("t.conf line 2: unknown key 'gpus'"));
  CHECK_THROWS_WITH(parse_expectations("gpu_count=eight\n", "t", "t.conf"), Catch::Contains("t.conf line 1: gpu_count"));
  CHECK_THROWS_WITH(parse_expectations("mode=nvlink\n", "t", "t.conf"), Catch::Contains("expected tcpxo, tcpx, gib or rdma"));
  CHECK_THROWS_WITH(parse_expectations("gpu_count=8\ngpu_count=4\n", "t", "t.conf"), Catch::Contains("given twice"));
  CHECK_THROWS_WITH(parse_expectations("gpu_count\n", "t", "t.conf"), Catch::Contains("expected KEY=VALUE"));
}

TEST_CASE("every shipped expectations file parses and names its machine type's transport", "[check_node]") {
  const std::vector<std::string> dirs{GPUDIRECT_EXPECTATIONS_DIR};
  const auto types = known_machine_types(dirs);
  CHECK(types == std::vector<std::string>{"a3-highgpu-8g", "a3-megagpu-8g", "a3-ultragpu-8g", "a4-highgpu-8g"});
  for (const std::string& type : types) {
    const Expectations e = load_expectations(type, dirs);
    CHECK_FALSE(e.mode.empty());
    CHECK(e.gpu_count == 8);
    CHECK_FALSE(e.data_nics.empty());
  }
  CHECK(load_expectations("a3-megagpu-8g", dirs).data_nics.size() == 8);
  CHECK(load_expectations("a3-megagpu-8g", dirs).aperture_devices == "/dev/aperture_devices");
  CHECK_THROWS_WITH(load_expectations("a9-unknown", dirs), Catch::Contains("known: a3-highgpu-8g, a3-megagpu-8g"));
  CHECK_THROWS_WITH(load_expectations("../etc/passwd", dirs), Catch::Contains("not a plain name"));
}
