#include "supervise/node_checks.hpp"

#include "bounded_jobs.hpp"
#include "check_node_result.hpp"
#include "shell_words.hpp"
#include "work_dir.hpp"

#include "gpudirect/text.hpp"

#include <nlohmann/json.hpp>

#include <sstream>

namespace gpudirect::launcher::supervise {
namespace {

std::string last_line(const std::string& text) {
  std::istringstream lines(text);
  std::string line, last;
  while (std::getline(lines, line))
    if (!line.empty()) last = line;
  return last;
}

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", s);
  return text;
}

}  // namespace

std::vector<std::string> node_check_command(const std::string& node, const SuperviseOptions& o, const std::string& json_path) {
  std::vector<std::string> argv{
      "srun", "--nodes=1", "--nodelist=" + node, "--ntasks=1", "--overlap", "--job-name=gpudirect-node-check", "--output=" + json_path};
  const std::string program = o.node_check_program.empty() ? o.launcher : o.node_check_program;
  argv.push_back(program);
  if (o.node_check.empty()) {
    argv.push_back("--version");
    return argv;
  }
  for (const std::string& item : {std::string("check-node"), std::string("--machine-type"), o.node_check, std::string("--json")})
    argv.push_back(item);
  argv.insert(argv.end(), o.node_check_args.begin(), o.node_check_args.end());
  return argv;
}

std::vector<NodeFinding> check_nodes(const std::vector<std::string>& nodes, const SuperviseOptions& o, const std::string& dir,
                                     const Progress& progress) {
  std::vector<BoundedJob> jobs;
  std::vector<std::string> json_paths;
  for (const std::string& node : nodes) {
    json_paths.push_back(dir + "/check-" + node + ".json");
    remove_stale(json_paths.back());
    jobs.push_back({node_check_command(node, o, json_paths.back()), dir + "/check-" + node + ".log"});
  }
  progress("checking " + join(nodes, ",") +
           (o.node_check.empty() ? " (does each run a step?)" : " with check-node --machine-type " + o.node_check) + ", at most " +
           seconds_text(o.check_timeout_s) + " s (logs in " + dir + ")");
  const std::vector<JobEnd> ends = run_bounded(jobs, o.check_timeout_s, nullptr, nullptr);
  std::vector<NodeFinding> findings;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    NodeFinding f;
    f.node = nodes[i];
    const auto output = read_own_file(json_paths[i]);
    const std::string log = read_own_file(jobs[i].log_path).value_or("");
    if (o.node_check.empty() && ends[i].exit_code == 0) {
      f.answer = Answer::passed;
    } else if (const auto result = !o.node_check.empty() && output ? node_check_result(nodes[i], *output) : std::nullopt) {
      f.answer = result->ok ? Answer::passed : Answer::failed;
      f.reason = result->reason.empty() ? "unspecified" : result->reason;
      f.comment = result->comment;
    } else {
      f.answer = Answer::silent;
      f.reason = "unspecified";
      const std::string why = ends[i].timed_out ? "no answer within " + seconds_text(o.check_timeout_s) + " s"
                                                : "srun exit " + std::to_string(ends[i].exit_code) + ", no result";
      const std::string detail = last_line(log);
      f.comment = "gpudirect supervise: the node could not run a check step (" + why + (detail.empty() ? "" : ": " + detail) + ")";
    }
    findings.push_back(std::move(f));
  }
  return findings;
}

std::vector<NodeFinding> bad_nodes_in_sweep(const std::string& report_json) {
  std::vector<NodeFinding> bad;
  const auto report = nlohmann::json::parse(report_json, nullptr, false);
  if (report.is_discarded() || !report.is_object() || !report.contains("nodes") || !report["nodes"].is_array()) return bad;
  for (const auto& node : report["nodes"]) {
    if (!node.is_object() || node.value("verdict", "") != "bad") continue;
    NodeFinding f;
    f.node = node.value("node", "");
    f.answer = Answer::failed;
    f.reason = "PERFORMANCE";
    f.comment = node.value("drain_reason", "gpudirect health: the pair test names it");
    if (!f.node.empty()) bad.push_back(std::move(f));
  }
  return bad;
}

std::vector<NodeFinding> sweep_pairs(const std::vector<std::string>& nodes, const SuperviseOptions& o, const std::string& dir,
                                     const Progress& progress) {
  const std::string report = dir + "/sweep.json";
  remove_stale(report);
  std::vector<std::string> argv{o.launcher,
                                "--timeout",
                                seconds_text(o.rank_timeout_s),
                                "health",
                                "--nodelist",
                                join(nodes, ","),
                                "--ntasks-per-node",
                                std::to_string(o.ntasks_per_node),
                                "--srun-arg=--overlap",
                                "--work-dir",
                                dir + "/sweep",
                                "--json",
                                report};
  argv.insert(argv.end(), o.sweep_args.begin(), o.sweep_args.end());
  progress("pair test over " + join(nodes, ",") + ": " + shell_line(argv));
  // health bounds each pair itself (--pair-timeout, 300 s unless given); this is the backstop.
  const std::vector<JobEnd> ends = run_bounded({{argv, dir + "/sweep.log"}}, 1800, nullptr, nullptr);
  const auto text = read_own_file(report);
  if (!text) {
    progress("the pair test gave no report (exit " + std::to_string(ends.front().exit_code) + "; see " + dir + "/sweep.log)");
    return {};
  }
  return bad_nodes_in_sweep(*text);
}

}  // namespace gpudirect::launcher::supervise
