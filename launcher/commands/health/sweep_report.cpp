#include "health/sweep_report.hpp"

#include "gpudirect/text.hpp"
#include "health/drain_lines.hpp"

#include <algorithm>
#include <cstdio>

namespace gpudirect::launcher::health {
namespace {

std::string run_value(const SweepRun& run) {
  return run.outcome == Outcome::measured ? short_number(run.busbw) + " GB/s" : std::string(to_string(run.outcome));
}

}  // namespace

std::string pair_summary(const SweepResult& result, const NodeVerdict& node) {
  if (node.verdict == Verdict::skipped) return node.slurm_state;
  if (!node.node_check.empty()) return node.node_check;
  std::string out;
  for (std::size_t i : node.runs) {
    const SweepRun& run = result.runs[i];
    out += (out.empty() ? "" : ", ") + peer_of(run, node.node) + " " + run_value(run);
  }
  return out.empty() ? "-" : out;
}

std::string report_table(const SweepResult& result) {
  std::size_t width = 4;
  for (const NodeVerdict& n : result.nodes) width = std::max(width, n.node.size());
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "# gpudirect health: all_gather bus bandwidth threshold %s GB/s (%s)\n",
                short_number(result.threshold.gbps).c_str(), result.threshold.source.c_str());
  out += line;
  std::snprintf(line, sizeof line, "%-*s  %5s  %-8s  %s\n", static_cast<int>(width), "node", "pairs", "verdict", "busbw per pair");
  out += line;
  for (const NodeVerdict& n : result.nodes) {
    std::snprintf(line, sizeof line, "%-*s  %5zu  %-8s  ", static_cast<int>(width), n.node.c_str(), n.runs.size(),
                  n.verdict == Verdict::bad ? "BAD" : to_string(n.verdict));
    out += line + pair_summary(result, n) + "\n";
  }
  bool groups = false;
  for (const SweepRun& run : result.runs) {
    if (run.phase != Phase::group) continue;
    if (!groups) out += "# groups (report only: a slow group does not name its node)\n";
    groups = true;
    out += "group " + std::to_string(run.nodes.size()) + " nodes " + join(run.nodes) + ": " + run_value(run) +
           (run.outcome == Outcome::measured ? (run.busbw >= result.threshold.gbps ? " ok" : " UNDER THRESHOLD") : "") +
           (run.detail.empty() ? "" : " (" + run.detail + ")") + "\n";
  }
  out += block_pairs_report(result.blocks, result.runs);
  if (!result.drains.empty()) out += "# drain the bad nodes with:\n";
  for (const auto& [node, reason] : result.drains) {
    const auto comment = result.drain_comments.find(node);
    out += drain_line(node, reason, comment == result.drain_comments.end() ? "" : comment->second) + "\n";
  }
  return out;
}

nlohmann::json report_json(const SweepResult& result) {
  nlohmann::json runs = nlohmann::json::array();
  for (const SweepRun& run : result.runs) {
    nlohmann::json entry{{"nodes", run.nodes},
                         {"phase", to_string(run.phase)},
                         {"outcome", to_string(run.outcome)},
                         {"seconds", run.seconds},
                         {"passed", passes(run, result.threshold.gbps)}};
    if (run.outcome == Outcome::measured) entry["busbw"] = run.busbw;
    if (!run.detail.empty()) entry["detail"] = run.detail;
    if (!result.blocks.empty() && run.nodes.size() == 2) entry["path"] = to_string(pair_path(result.blocks, run.nodes[0], run.nodes[1]));
    runs.push_back(std::move(entry));
  }
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeVerdict& n : result.nodes) {
    nlohmann::json pairs = nlohmann::json::array();
    for (std::size_t i : n.runs) {
      const SweepRun& run = result.runs[i];
      nlohmann::json pair{{"peer", peer_of(run, n.node)}, {"outcome", to_string(run.outcome)}, {"run", i}};
      if (run.outcome == Outcome::measured) pair["busbw"] = run.busbw;
      pairs.push_back(std::move(pair));
    }
    nlohmann::json entry{{"node", n.node}, {"verdict", to_string(n.verdict)}, {"pairs", pairs}};
    if (n.verdict == Verdict::skipped) entry["slurm_state"] = n.slurm_state;
    if (!n.node_check.empty()) entry["node_check"] = n.node_check;
    if (const auto comment = result.drain_comments.find(n.node); comment != result.drain_comments.end())
      entry["drain_comment"] = comment->second;
    for (const auto& [node, reason] : result.drains)
      if (node == n.node) entry["drain_reason"] = reason;
    nodes.push_back(std::move(entry));
  }
  return {{"collective", "all_gather"},
          {"threshold_gbps", result.threshold.gbps},
          {"threshold_source", result.threshold.source},
          {"timestamp", result.timestamp},
          {"nodes", nodes},
          {"runs", runs},
          {"fleet", result.fleet.is_null() ? nlohmann::json::array() : result.fleet}};
}

}  // namespace gpudirect::launcher::health
