#include "check_node/finding.hpp"

#include <algorithm>

namespace gpudirect::launcher::check_node {

std::string_view to_string(Fault fault) {
  switch (fault) {
    case Fault::gpu_hardware:
      return "gpu_hardware";
    case Fault::performance:
      return "performance";
    case Fault::configuration:
      return "configuration";
  }
  return "configuration";
}

std::string_view to_string(Severity severity) { return severity == Severity::fail ? "FAIL" : "WARN"; }

std::string summary(const Finding& finding) {
  std::string out = finding.subject + ": " + finding.what;
  if (!finding.measured.empty()) out += " " + finding.measured;
  if (!finding.expected.empty()) out += ", expected " + finding.expected;
  return out;
}

std::string describe(const Finding& finding) {
  return std::string(to_string(finding.severity)) + " " + summary(finding) + (finding.fix.empty() ? "" : "; fix: " + finding.fix);
}

nlohmann::json to_json(const Finding& finding) {
  return {{"severity", finding.severity == Severity::fail ? "fail" : "warn"},
          {"fault", std::string(to_string(finding.fault))},
          {"check", finding.check},
          {"subject", finding.subject},
          {"what", finding.what},
          {"measured", finding.measured},
          {"expected", finding.expected},
          {"fix", finding.fix}};
}

bool any_failure(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::fail; });
}

}  // namespace gpudirect::launcher::check_node
