#include "health/sweep_run.hpp"

namespace gpudirect::launcher::health {

const char* to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::measured:
      return "measured";
    case Outcome::failed:
      return "failed";
    case Outcome::timed_out:
      return "timed out";
    case Outcome::not_started:
      return "not started";
  }
  return "?";
}

const char* to_string(Phase phase) {
  switch (phase) {
    case Phase::first_pass:
      return "pairs";
    case Phase::second_pass:
      return "second pass";
    case Phase::group:
      return "group";
  }
  return "?";
}

bool passes(const SweepRun& run, double threshold) { return run.outcome == Outcome::measured && run.busbw >= threshold; }

std::string peer_of(const SweepRun& run, const std::string& node) {
  if (run.nodes.size() != 2) return "";
  if (run.nodes[0] == node) return run.nodes[1];
  if (run.nodes[1] == node) return run.nodes[0];
  return "";
}

}  // namespace gpudirect::launcher::health
