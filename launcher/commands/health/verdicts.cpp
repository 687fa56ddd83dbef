#include "health/verdicts.hpp"

#include <set>

namespace gpudirect::launcher::health {

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::good:
      return "good";
    case Verdict::bad:
      return "bad";
    case Verdict::suspect:
      return "suspect";
    case Verdict::untested:
      return "untested";
    case Verdict::skipped:
      return "skipped";
  }
  return "?";
}

std::vector<NodeVerdict> judge_nodes(const std::vector<std::string>& nodes, const std::vector<SweepRun>& runs, double threshold) {
  // Proven good: at least one passing pair.
  std::set<std::string> good;
  for (const SweepRun& run : runs)
    if (run.phase != Phase::group && passes(run, threshold)) good.insert(run.nodes.begin(), run.nodes.end());

  std::vector<NodeVerdict> verdicts;
  for (const std::string& node : nodes) {
    NodeVerdict v;
    v.node = node;
    bool judged = false;  // a run that says something about the node (not "not started")
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const SweepRun& run = runs[i];
      if (run.phase == Phase::group || peer_of(run, node).empty()) continue;
      v.runs.push_back(i);
      if (run.outcome == Outcome::not_started) continue;
      judged = true;
      if (!passes(run, threshold) && good.count(peer_of(run, node))) v.evidence = i;  // the latest: the second pass was made to decide
    }
    if (good.count(node))
      v.verdict = Verdict::good;
    else if (v.evidence)
      v.verdict = Verdict::bad;
    else if (judged)
      v.verdict = Verdict::suspect;
    else
      v.verdict = Verdict::untested;
    verdicts.push_back(std::move(v));
  }
  return verdicts;
}

std::vector<std::string> suspects(const std::vector<NodeVerdict>& verdicts) { return nodes_with(verdicts, Verdict::suspect); }

std::vector<std::string> nodes_with(const std::vector<NodeVerdict>& verdicts, Verdict verdict) {
  std::vector<std::string> out;
  for (const NodeVerdict& v : verdicts)
    if (v.verdict == verdict) out.push_back(v.node);
  return out;
}

}  // namespace gpudirect::launcher::health
