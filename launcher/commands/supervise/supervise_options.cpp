#include "supervise/supervise_options.hpp"

#include "command_errors.hpp"

#include <stdexcept>

namespace gpudirect::launcher::supervise {
namespace {

// "--name VALUE" or "--name=VALUE" in train's arguments; the last one wins, as in CLI11.
bool option_value(const std::vector<std::string>& args, const std::string& name, std::string& value) {
  bool found = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == name && i + 1 < args.size()) {
      value = args[++i];
      found = true;
    } else if (args[i].rfind(name + "=", 0) == 0) {
      value = args[i].substr(name.size() + 1);
      found = true;
    }
  }
  return found;
}

bool has(const std::vector<std::string>& args, const std::string& name) {
  for (const std::string& a : args)
    if (a == name || a.rfind(name + "=", 0) == 0) return true;
  return false;
}

long number(const std::string& option, const std::string& text) {
  try {
    std::size_t used = 0;
    const long value = std::stol(text, &used);
    if (used == text.size() && value >= 0) return value;
  } catch (const std::exception&) {
  }
  throw UsageError("train's " + option + " '" + text + "' is not a whole number");
}

}  // namespace

TrainPlan check_options(const SuperviseOptions& o) {
  if (o.spare_nodes < 0) throw UsageError("--spare-nodes must be 0 or more");
  if (o.ntasks_per_node < 1) throw UsageError("--ntasks-per-node must be at least 1");
  const WatchSettings& w = o.watch;
  if (w.straggler_steps < 0 || w.slow_steps < 0 || w.baseline_steps < 1)
    throw UsageError("--straggler-steps and --slow-steps must be 0 (off) or more, --baseline-steps at least 1");
  if (w.slow_factor <= 1) throw UsageError("--slow-factor must be over 1 (a step slower than the normal one by this factor is slow)");
  if (w.hang_factor <= 1 || w.hang_min_s <= 0 || w.start_s <= 0 || w.checkpoint_s < 0)
    throw UsageError("--hang-factor must be over 1, --hang-min and --start-timeout over 0 s, --checkpoint-timeout 0 s or more");
  if (o.rank_timeout_s <= 0 || o.check_timeout_s <= 0 || o.stop_grace_s <= 0)
    throw UsageError("--rank-timeout, --check-timeout and --stop-grace must be over 0 s");
  if (o.max_restarts < 0) throw UsageError("--max-restarts must be 0 or more");
  if (o.train_args.empty())
    throw UsageError(
        "give train's options after --: gpudirect-launch supervise --spare-nodes 2 -- --preset tiny --steps 1000 --checkpoint PATH");
  for (const char* own : {"-J", "--json", "--np"})
    if (has(o.train_args, own))
      throw UsageError(std::string("train's ") + own + " is the supervisor's to set: give supervise " +
                       (std::string(own) == "--np" ? "no --np (srun starts the ranks)" : "-J FILE, which holds every attempt's lines"));
  TrainPlan plan;
  if (!option_value(o.train_args, "--checkpoint", plan.checkpoint) || plan.checkpoint.empty())
    throw UsageError("train needs --checkpoint PATH on storage every node sees: each restart resumes from it");
  if (plan.checkpoint.front() != '/')
    throw UsageError("train's --checkpoint " + plan.checkpoint +
                     " must be an absolute path: the ranks start in another directory on every node");
  std::string text;
  if (option_value(o.train_args, "--checkpoint-every", text)) plan.checkpoint_every = static_cast<int>(number("--checkpoint-every", text));
  if (option_value(o.train_args, "--steps", text)) plan.steps = number("--steps", text);
  return plan;
}

}  // namespace gpudirect::launcher::supervise
