#include <catch2/catch.hpp>

#include "health/drain_lines.hpp"
#include "health/health_metrics.hpp"
#include "health/heat_map_svg.hpp"
#include "health/sweep_report.hpp"

using namespace gpudirect::launcher::health;

namespace {

// Four nodes, node2 slow: its pair and its second-pass pair are under the threshold.
SweepResult slow_node2() {
  SweepResult result;
  result.runs = {{{"node1", "node2"}, Phase::first_pass, Outcome::measured, 0.4, "", 2},
                 {{"node3", "node4"}, Phase::first_pass, Outcome::measured, 5.0, "", 2},
                 {{"node1", "node3"}, Phase::second_pass, Outcome::measured, 5.2, "", 2},
                 {{"node2", "node4"}, Phase::second_pass, Outcome::timed_out, 0, "killed after 60 s", 60},
                 {{"node1", "node3", "node4", "node5"}, Phase::group, Outcome::measured, 4.0, "", 3}};
  result.threshold = {3.5, "0.7 x the median 5 GB/s"};
  result.nodes = judge_nodes({"node1", "node2", "node3", "node4"}, result.runs, result.threshold.gbps);
  NodeVerdict down;
  down.node = "node5";
  down.verdict = Verdict::skipped;
  down.slurm_state = "down*: Not responding";
  result.nodes.push_back(down);
  result.drains.emplace_back("node2", drain_reason(result.runs[3], "node2", result.threshold.gbps));
  result.timestamp = 1795000000;
  return result;
}

}  // namespace

TEST_CASE("the table names each node's pairs, verdict and the drain line", "[health]") {
  const std::string table = report_table(slow_node2());
  CHECK_THAT(table, Catch::Contains("threshold 3.5 GB/s (0.7 x the median 5 GB/s)"));
  CHECK_THAT(table, Catch::Contains("node2      2  BAD       node1 0.4 GB/s, node4 timed out"));
  CHECK_THAT(table, Catch::Contains("node1      2  good      node2 0.4 GB/s, node3 5.2 GB/s"));
  CHECK_THAT(table, Catch::Contains("node5      0  skipped   down*: Not responding"));
  CHECK_THAT(table, Catch::Contains("group 4 nodes node1,node3,node4,node5: 4 GB/s ok"));
  CHECK_THAT(
      table,
      Catch::Contains("scontrol update nodename=node2 state=drain reason='gpudirect health: all_gather timed out after 60 s with node4'"));
}

TEST_CASE("the JSON has every node with its verdict, pairs and drain reason", "[health]") {
  const auto json = report_json(slow_node2());
  CHECK(json["threshold_gbps"] == 3.5);
  CHECK(json["timestamp"] == 1795000000);
  REQUIRE(json["nodes"].size() == 5);
  CHECK(json["nodes"][1]["node"] == "node2");
  CHECK(json["nodes"][1]["verdict"] == "bad");
  CHECK(json["nodes"][1]["drain_reason"].get<std::string>().rfind("gpudirect health:", 0) == 0);
  CHECK(json["nodes"][1]["pairs"][0]["peer"] == "node1");
  CHECK(json["nodes"][1]["pairs"][0]["busbw"] == 0.4);
  CHECK(json["nodes"][4]["slurm_state"] == "down*: Not responding");
  CHECK(json["runs"].size() == 5);
  CHECK(json["runs"][3]["outcome"] == "timed out");
  CHECK(json["runs"][4]["phase"] == "group");
}

TEST_CASE("the heat map has a tile per node with a line per pair, a bar per group, labels escaped", "[health]") {
  SweepResult result = slow_node2();
  result.nodes[0].node = "node1";
  const std::string svg = heat_map_svg(result.nodes, result.runs, result.threshold.gbps, "sweep <a&b>");
  CHECK_THAT(svg, Catch::StartsWith("<?xml"));
  CHECK_THAT(svg, Catch::EndsWith("</svg>\n"));
  CHECK_THAT(svg, Catch::Contains("sweep &lt;a&amp;b&gt;"));
  CHECK_THAT(svg, Catch::Contains("<title>node1 + node2: 0.4 GB/s (pairs)</title>"));
  CHECK_THAT(svg, Catch::Contains("<title>node2 + node4: timed out (killed after 60 s) (second pass)</title>"));
  CHECK_THAT(svg, !Catch::Contains(">node5</text>"));  // skipped nodes have no tile
  std::size_t lines = 0;
  for (std::size_t at = svg.find("<g><title>"); at != std::string::npos; at = svg.find("<g><title>", at + 1)) ++lines;
  CHECK(lines == 8);                                                  // 4 pair runs, each in both nodes' tiles
  CHECK_THAT(svg, Catch::Contains("fill=\"#c00000\">node2</text>"));  // the bad node's label is red
  CHECK_THAT(svg, Catch::Contains("<g class=\"group\"><title>node1 + node3 + node4 + node5: 4 GB/s (group)</title>"));
  CHECK_THAT(svg, Catch::Contains(">4 nodes</text>"));
}

TEST_CASE("the heat map of 64 nodes stays a few screens wide: 8 tiles to a row", "[health]") {
  std::vector<std::string> names;
  std::vector<SweepRun> runs;
  for (int i = 1; i <= 64; ++i) names.push_back("node" + std::to_string(i));
  for (int i = 0; i < 64; i += 2) runs.push_back({{names[i], names[i + 1]}, Phase::first_pass, Outcome::measured, 5.0, "", 2});
  for (int i = 60; i >= 0; i -= 4)
    runs.push_back({{names[i], names[i + 1], names[i + 2], names[i + 3]}, Phase::group, Outcome::measured, 4.0, "", 3});
  runs.push_back({names, Phase::group, Outcome::timed_out, 0, "killed after 60 s", 60});
  const auto nodes = judge_nodes(names, runs, 3.5);
  const std::string svg = heat_map_svg(nodes, runs, 3.5, "64");
  const auto attribute = [&](const std::string& name) { return std::stoi(svg.substr(svg.find(name + "=\"") + name.size() + 2)); };
  CHECK(attribute("width") <= 1600);
  CHECK(attribute("height") <= 1000);
  std::size_t bars = 0;
  for (std::size_t at = svg.find("<g class=\"group\">"); at != std::string::npos; at = svg.find("<g class=\"group\">", at + 1)) ++bars;
  CHECK(bars == 17);
  CHECK_THAT(svg, Catch::Contains(">64 nodes</text>"));
  // The groups ended last-first; their bars still run in the nodes' order, node1's first.
  CHECK(svg.find("<title>node1 + node2 + node3 + node4:") < svg.find("<title>node61 + node62 + node63 + node64:"));
  CHECK_THAT(svg, Catch::Contains("timed out (killed after 60 s) (group)</title>"));
}

TEST_CASE("the metrics file has per node busbw and verdict, the threshold and the time", "[health]") {
  const std::string text = health_metrics(slow_node2()).text();
  CHECK_THAT(text, Catch::Contains("# TYPE gpudirect_health_node_busbw_gbps gauge"));
  CHECK_THAT(text, Catch::Contains("gpudirect_health_node_busbw_gbps{node=\"node1\"} 5.2\n"));
  CHECK_THAT(text, Catch::Contains("gpudirect_health_node_busbw_gbps{node=\"node2\"} 0.4\n"));
  CHECK_THAT(text, Catch::Contains("gpudirect_health_node_passed{node=\"node2\",verdict=\"bad\"} 0\n"));
  CHECK_THAT(text, Catch::Contains("gpudirect_health_node_passed{node=\"node3\",verdict=\"good\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("gpudirect_health_node_passed{node=\"node5\",verdict=\"skipped\"} 0\n"));
  CHECK_THAT(text, !Catch::Contains("gpudirect_health_node_busbw_gbps{node=\"node5\"}"));  // never measured
  CHECK_THAT(text, Catch::Contains("gpudirect_health_threshold_gbps 3.5\n"));
  CHECK_THAT(text, Catch::Contains("gpudirect_health_bad_nodes 1\n"));
  CHECK_THAT(text, Catch::Contains("gpudirect_health_timestamp_seconds 1795000000\n"));
}

TEST_CASE("with --machine-type every health sample names it, for the alert rules' per-type thresholds", "[health]") {
  SweepResult result = slow_node2();
  result.threshold = {150, "a3-megagpu-8g"};
  result.machine_type = "a3-megagpu-8g";
  const std::string text = health_metrics(result).text();
  CHECK_THAT(text, Catch::Contains("gpudirect_health_node_busbw_gbps{machine_type=\"a3-megagpu-8g\",node=\"node2\"} 0.4\n"));
  CHECK_THAT(text, Catch::Contains("gpudirect_health_node_passed{machine_type=\"a3-megagpu-8g\",node=\"node2\",verdict=\"bad\"} 0\n"));
  CHECK_THAT(text, Catch::Contains("gpudirect_health_node_pairs{machine_type=\"a3-megagpu-8g\",node=\"node1\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("gpudirect_health_threshold_gbps{machine_type=\"a3-megagpu-8g\"} 150\n"));
  CHECK_THAT(text, Catch::Contains("gpudirect_health_bad_nodes{machine_type=\"a3-megagpu-8g\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("gpudirect_health_timestamp_seconds{machine_type=\"a3-megagpu-8g\"} 1795000000\n"));
}
