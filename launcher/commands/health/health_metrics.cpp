#include "health/health_metrics.hpp"

#include <algorithm>
#include <optional>

namespace gpudirect::launcher::health {

metrics::PrometheusTextfile health_metrics(const SweepResult& result) {
  using metrics::MetricType;
  // With --machine-type every sample names it, so an alert can hold each node to its type's threshold.
  metrics::Labels base;
  if (!result.machine_type.empty()) base.emplace_back("machine_type", result.machine_type);
  const auto with = [&base](metrics::Labels extra) {
    metrics::Labels labels = base;
    labels.insert(labels.end(), extra.begin(), extra.end());
    return labels;
  };
  metrics::PrometheusTextfile file;
  file.declare("gpudirect_health_node_busbw_gbps", MetricType::gauge,
               "The node's best all_gather bus bandwidth with any peer in the last sweep, in GB/s (1e9 bytes/s)");
  file.declare("gpudirect_health_node_passed", MetricType::gauge,
               "1 when the node passed the last sweep, else 0; label verdict: good, bad, suspect, untested or skipped (down/drained)");
  file.declare("gpudirect_health_node_pairs", MetricType::gauge, "Pair jobs the node ran in the last sweep (both passes)");
  file.declare("gpudirect_health_threshold_gbps", MetricType::gauge, "The all_gather bus bandwidth a pair had to reach, in GB/s");
  file.declare("gpudirect_health_bad_nodes", MetricType::gauge, "Nodes found bad in the last sweep");
  file.declare("gpudirect_health_timestamp_seconds", MetricType::gauge, "When the last sweep ended, in seconds since the Unix epoch");
  std::size_t bad = 0;
  for (const NodeVerdict& node : result.nodes) {
    std::optional<double> best;
    for (std::size_t i : node.runs) {
      const SweepRun& run = result.runs[i];
      if (run.outcome == Outcome::measured) best = std::max(best.value_or(run.busbw), run.busbw);
    }
    if (best) file.add("gpudirect_health_node_busbw_gbps", with({{"node", node.node}}), *best);
    file.add("gpudirect_health_node_passed", with({{"node", node.node}, {"verdict", to_string(node.verdict)}}),
             node.verdict == Verdict::good ? 1 : 0);
    file.add("gpudirect_health_node_pairs", with({{"node", node.node}}), static_cast<double>(node.runs.size()));
    if (node.verdict == Verdict::bad) ++bad;
  }
  file.add("gpudirect_health_threshold_gbps", base, result.threshold.gbps);
  file.add("gpudirect_health_bad_nodes", base, static_cast<double>(bad));
  file.add("gpudirect_health_timestamp_seconds", base, static_cast<double>(result.timestamp));
  return file;
}

}  // namespace gpudirect::launcher::health
