#include "health/drain_lines.hpp"

namespace gpudirect::launcher::health {

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
  return clean_slurm_text(std::string(kReasonPrefix) + " " + what);
}

bool drained_by_us(std::string_view reason) { return reason.substr(0, kReasonPrefix.size()) == kReasonPrefix; }

}  // namespace gpudirect::launcher::health
