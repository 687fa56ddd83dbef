#include "health/drain_lines.hpp"

namespace gpudirect::launcher::health {
namespace {

// Slurm stores the reason as given; a quote or a control byte would break the printed line.
std::string clean(std::string text) {
  for (char& c : text)
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) c = '\'';
  constexpr std::size_t kMax = 200;
  if (text.size() > kMax) text.resize(kMax);
  return text;
}

}  // namespace

std::string drain_reason(const SweepRun& run, const std::string& node, double threshold) {
  const std::string peer = peer_of(run, node);
  const std::string with = peer.empty() ? "" : " with " + peer;
  std::string what;
  switch (run.outcome) {
    case Outcome::measured:
      what = "all_gather " + short_number(run.busbw) + " GB/s" + with + ", threshold " + short_number(threshold);
      break;
    case Outcome::timed_out:
      what = "all_gather timed out after " + short_number(run.seconds) + " s" + with;
      break;
    case Outcome::failed:
      what = "all_gather failed" + with + (run.detail.empty() ? "" : " (" + run.detail + ")");
      break;
    case Outcome::not_started:
      what = "all_gather did not start" + with;
      break;
  }
  return clean(std::string(kReasonPrefix) + " " + what);
}

std::vector<std::string> drain_command(const std::string& node, const std::string& reason) {
  return {"scontrol", "update", "nodename=" + node, "state=drain", "reason=" + reason};
}

std::vector<std::string> resume_command(const std::string& node) { return {"scontrol", "update", "nodename=" + node, "state=resume"}; }

std::string drain_line(const std::string& node, const std::string& reason) {
  return "scontrol update nodename=" + node + " state=drain reason=\"" + reason + "\"";
}

bool drained_by_us(std::string_view reason) { return reason.substr(0, kReasonPrefix.size()) == kReasonPrefix; }

}  // namespace gpudirect::launcher::health
