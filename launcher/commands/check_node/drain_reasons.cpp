#include "check_node/drain_reasons.hpp"

#include "node_drain.hpp"

#include <stdexcept>

namespace gpudirect::launcher::check_node {

ReasonMap default_reasons() {
  return {{Fault::gpu_hardware, "XID"}, {Fault::performance, "PERFORMANCE"}, {Fault::configuration, "unspecified"}};
}

void set_reason(ReasonMap& reasons, const std::string& assignment) {
  const auto equals = assignment.find('=');
  const std::string fault = assignment.substr(0, equals);
  const std::string text = equals == std::string::npos ? "" : assignment.substr(equals + 1);
  if (equals == std::string::npos || text.empty())
    throw std::invalid_argument("--reason '" + assignment + "': expected FAULT=TEXT, e.g. configuration=unspecified");
  for (const Fault f : {Fault::gpu_hardware, Fault::performance, Fault::configuration})
    if (fault == to_string(f)) {
      reasons[f] = clean_slurm_text(text);
      return;
    }
  throw std::invalid_argument("--reason '" + assignment + "': FAULT is gpu_hardware, performance or configuration");
}

std::string drain_reason(const std::vector<Finding>& findings, const ReasonMap& reasons) {
  for (const Fault f : {Fault::gpu_hardware, Fault::performance, Fault::configuration})
    for (const Finding& finding : findings)
      if (finding.severity == Severity::fail && finding.fault == f) return reasons.at(f);
  return "";
}

std::string drain_comment(const std::vector<Finding>& findings) {
  constexpr std::size_t kMax = 480;  // the whole line stays readable in scontrol show node
  std::string out = "gpudirect check-node:";
  std::size_t listed = 0, failing = 0;
  for (const Finding& finding : findings) {
    if (finding.severity != Severity::fail) continue;
    ++failing;
    const std::string item = (listed ? "; " : " ") + summary(finding);
    if (out.size() + item.size() > kMax - 20) continue;
    out += item;
    ++listed;
  }
  if (failing > listed) out += " (+" + std::to_string(failing - listed) + " more)";
  return clean_slurm_text(out, kMax);
}

}  // namespace gpudirect::launcher::check_node
