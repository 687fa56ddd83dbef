#include "health/pair_job.hpp"

#include "gpudirect/text.hpp"
#include "number_text.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <regex>

namespace gpudirect::launcher::health {
namespace {

// The line of the log that says why the job failed, for the table and the drain reason: the
// launcher's own first report (it names the rank and host), else srun's last error.
std::string failure_line(const std::string& log) {
  std::string srun_error;
  for (std::string_view line : split(log, '\n')) {
    line = trim(line);
    if (line.find("gpudirect bench:") != std::string_view::npos || line.find("gpudirect-launch:") != std::string_view::npos)
      return std::string(line);
    if (line.find("srun: error:") != std::string_view::npos) srun_error = std::string(line);
  }
  return srun_error;
}

}  // namespace

std::vector<std::string> srun_command(const std::vector<std::string>& nodes, const JobOptions& o, const std::string& json_path) {
  const long minutes = std::max(1L, static_cast<long>(std::ceil(o.pair_timeout_s / 60.0)) + 1);
  std::vector<std::string> argv{"srun", "--nodes=" + std::to_string(nodes.size()), "--nodelist=" + join(nodes, ","),
                                // --ntasks too: inside an allocation srun would take salloc's SLURM_NTASKS.
                                "--ntasks=" + std::to_string(nodes.size() * static_cast<std::size_t>(o.tasks_per_node)),
                                "--ntasks-per-node=" + std::to_string(o.tasks_per_node), "--job-name=" + o.job_name,
                                "--time=" + std::to_string(minutes), "--kill-on-bad-exit=1"};
  if (o.gpus_per_task > 0) argv.push_back("--gpus-per-task=" + std::to_string(o.gpus_per_task));
  if (!o.gpu_direct.empty()) argv.push_back("--gpu-direct=" + o.gpu_direct);
  argv.insert(argv.end(), o.srun_args.begin(), o.srun_args.end());
  for (const std::string& item :
       {o.launcher, std::string("--timeout"), plain_number(o.bench_timeout_s), std::string("bench"), std::string("all_gather"),
        std::string("-b"), o.min_bytes, std::string("-e"), o.max_bytes, std::string("-f"), o.step_factor, std::string("-n"),
        std::to_string(o.iters), std::string("-w"), std::to_string(o.warmup)})
    argv.push_back(item);
  argv.insert(argv.end(), o.bench_args.begin(), o.bench_args.end());
  argv.push_back("--json");
  argv.push_back(json_path);
  return argv;
}

std::optional<BenchResult> bench_result_from_json(const std::string& json_text) {
  const auto json = nlohmann::json::parse(json_text, nullptr, false);
  if (json.is_discarded() || !json.is_object() || !json.contains("avg_busbw") || !json["avg_busbw"].is_number()) return std::nullopt;
  BenchResult result;
  result.busbw = json["avg_busbw"].get<double>();
  if (json.contains("wrong_total") && json["wrong_total"].is_number_unsigned()) result.wrong = json["wrong_total"].get<std::size_t>();
  return result;
}

std::optional<BenchResult> bench_result_from_output(const std::string& output) {
  static const std::regex average(R"(# Avg bus bandwidth\s*:\s*([0-9.eE+-]+))");
  static const std::regex wrong(R"(# Out of bounds values\s*:\s*([0-9]+))");
  std::smatch match;
  if (!std::regex_search(output, match, average)) return std::nullopt;
  const auto value = try_parse_number(match[1].str());
  if (!value) return std::nullopt;
  BenchResult result;
  result.busbw = *value;
  if (std::regex_search(output, match, wrong)) result.wrong = try_parse_integer<std::size_t>(match[1].str(), 0, SIZE_MAX).value_or(0);
  return result;
}

bool waited_for_resources(const std::string& srun_output) {
  return srun_output.find("queued and waiting for resources") != std::string::npos &&
         srun_output.find("has been allocated resources") == std::string::npos;
}

SweepRun judge_job(std::vector<std::string> nodes, Phase phase, int exit_code, bool timed_out, double seconds, const std::string& log,
                   const std::optional<std::string>& json_text) {
  SweepRun run;
  run.nodes = std::move(nodes);
  run.phase = phase;
  run.seconds = seconds;
  if (timed_out) {
    run.outcome = waited_for_resources(log) ? Outcome::not_started : Outcome::timed_out;
    run.detail = run.outcome == Outcome::not_started ? "still queued for the nodes (busy?)"
                                                     : "killed after " + plain_number(std::round(seconds)) + " s";
    return run;
  }
  std::optional<BenchResult> result;
  if (json_text) result = bench_result_from_json(*json_text);
  if (!result) result = bench_result_from_output(log);
  if (exit_code == 0 && result && result->busbw && result->wrong == 0) {
    run.outcome = Outcome::measured;
    run.busbw = *result->busbw;
    return run;
  }
  run.outcome = Outcome::failed;
  if (result && result->wrong > 0)
    run.detail = std::to_string(result->wrong) + " wrong values";
  else {
    const std::string why = failure_line(log);
    run.detail = "exit " + std::to_string(exit_code) + (why.empty() ? "" : ": " + quote_bounded(why, 160));
  }
  return run;
}

}  // namespace gpudirect::launcher::health
