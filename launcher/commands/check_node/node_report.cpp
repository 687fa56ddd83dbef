#include "check_node/node_report.hpp"

#include "node_drain.hpp"

namespace gpudirect::launcher::check_node {

std::string report_lines(const NodeReport& report) {
  const std::string prefix = "gpudirect check-node: " + report.node + ": ";
  std::string out;
  for (const Finding& finding : report.findings) out += prefix + describe(finding) + "\n";
  std::size_t failing = 0, warnings = 0;
  for (const Finding& finding : report.findings) (finding.severity == Severity::fail ? failing : warnings)++;
  if (failing == 0) {
    out += prefix + "OK as a " + report.machine_type + (warnings ? " (" + std::to_string(warnings) + " warning(s))" : "") + "\n";
  } else {
    out +=
        prefix + std::to_string(failing) + " failing check(s), drain reason " + report.drain_reason + ": " +
        (report.drained ? "drained"
                        : "not drained (--drain drains it: " + drain_line(report.node, report.drain_reason, report.drain_comment) + ")") +
        "\n";
  }
  return out;
}

nlohmann::json report_json(const NodeReport& report) {
  nlohmann::json findings = nlohmann::json::array();
  for (const Finding& finding : report.findings) findings.push_back(to_json(finding));
  nlohmann::json out{{"node", report.node},
                     {"machine_type", report.machine_type},
                     {"ok", !any_failure(report.findings)},
                     {"findings", findings},
                     {"facts", report.facts}};
  if (any_failure(report.findings))
    out["drain"] = {{"reason", report.drain_reason}, {"comment", report.drain_comment}, {"drained", report.drained}};
  return out;
}

}  // namespace gpudirect::launcher::check_node
