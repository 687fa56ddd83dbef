#include "check_node/node_metrics.hpp"

#include <map>
#include <tuple>

namespace gpudirect::launcher::check_node {
namespace {

std::string fact(const nlohmann::json& facts, const char* key) {
  if (!facts.is_object() || !facts.contains(key) || facts[key].is_null()) return "";
  return facts[key].is_string() ? facts[key].get<std::string>() : facts[key].dump();
}

}  // namespace

metrics::PrometheusTextfile node_check_metrics(const NodeReport& report, long long timestamp) {
  using metrics::MetricType;
  const metrics::Labels base{{"node", report.node}, {"machine_type", report.machine_type}};
  const auto with = [&base](metrics::Labels extra) {
    metrics::Labels labels = base;
    labels.insert(labels.end(), extra.begin(), extra.end());
    return labels;
  };
  metrics::PrometheusTextfile file;
  file.declare("gpudirect_node_check_passed", MetricType::gauge, "1 when the node passed gpudirect-launch check-node, else 0");
  file.declare("gpudirect_node_check_findings", MetricType::gauge,
               "Findings of the last check-node run per check (labels check, fault: gpu_hardware, performance or configuration; "
               "severity: fail or warn)");
  file.declare("gpudirect_node_check_drain_reason", MetricType::gauge,
               "1 for the drain reason a failing node gets (label reason: XID, PERFORMANCE, unspecified or as --reason set it)");
  file.declare("gpudirect_node_check_info", MetricType::gauge,
               "Always 1; labels driver_version, cuda_driver_version, nccl_version as check-node read them (left out when unknown)");
  file.declare("gpudirect_node_check_timestamp_seconds", MetricType::gauge, "When check-node ran, in seconds since the Unix epoch");
  const bool passed = !any_failure(report.findings);
  file.add("gpudirect_node_check_passed", base, passed ? 1 : 0);
  std::map<std::tuple<std::string, std::string, std::string>, int> counts;
  for (const Finding& f : report.findings)
    ++counts[{f.check, std::string(to_string(f.fault)), f.severity == Severity::fail ? "fail" : "warn"}];
  for (const auto& [key, count] : counts)
    file.add("gpudirect_node_check_findings",
             with({{"check", std::get<0>(key)}, {"fault", std::get<1>(key)}, {"severity", std::get<2>(key)}}), count);
  if (!passed) file.add("gpudirect_node_check_drain_reason", with({{"reason", report.drain_reason}}), 1);
  // A version not known is left out: Prometheus treats an empty label as no label.
  metrics::Labels versions;
  for (const char* key : {"driver_version", "cuda_driver_version", "nccl_version"})
    if (const std::string value = fact(report.facts, key); !value.empty()) versions.emplace_back(key, value);
  file.add("gpudirect_node_check_info", with(versions), 1);
  file.add("gpudirect_node_check_timestamp_seconds", base, static_cast<double>(timestamp));
  return file;
}

}  // namespace gpudirect::launcher::check_node
