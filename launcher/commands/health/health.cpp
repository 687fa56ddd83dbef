// `gpudirect-launch health`: sweeps a partition or node list with bench all_gather on disjoint
// node pairs, every pair its own srun job, all at once; a second pass puts each node of a failing
// pair next to a node that passed; names the bad nodes, prints (or runs) their drain lines, and
// writes the table, JSON and an SVG heat map. Slurm is the engine; the logic is in the files next
// to this one.
#include "command_errors.hpp"
#include "command_registry.hpp"

#include "gpudirect/hostlist.hpp"
#include "gpudirect/text.hpp"
#include "bounded_jobs.hpp"
#include "health/drain_lines.hpp"
#include "health/health_metrics.hpp"
#include "health/heat_map_svg.hpp"
#include "health/fleet_versions.hpp"
#include "health/node_check_job.hpp"
#include "health/node_states.hpp"
#include "health/pair_job.hpp"
#include "health/pairing.hpp"
#include "health/sweep_report.hpp"
#include "health/threshold.hpp"
#include "health/verdicts.hpp"
#include "work_dir.hpp"
#include "number_text.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace gpudirect::launcher {
namespace {

using namespace health;

struct HealthOptions {
  std::string partition, nodelist;
  JobOptions job;
  bool groups = false, drain = false, resume = false;
  std::string machine_type;
  double threshold = -1;  // < 0: not given
  double median_factor = 0.7;
  std::string json, svg, metrics_file, work_dir;
  NodeCheckOptions node_check;
  std::string block_topology;  // a topology.conf with BlockName= lines; "" = ask scontrol show topology
};

// What --node-check found before the pairs: the nodes that failed it (bad, left out of the pairs),
// their drains with check-node's reason and comment, and the fleet's odd nodes out.
struct NodeCheckSummary {
  std::vector<NodeVerdict> failed;
  std::vector<std::pair<std::string, std::string>> drains;
  std::map<std::string, std::string> comments;
  nlohmann::json fleet = nlohmann::json::array();
};

void progress(const std::string& line) {
  std::fprintf(stderr, "gpudirect health: %s\n", line.c_str());
  std::fflush(stderr);
}

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream file(path);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void write_text(const std::string& path, const std::string& text, const char* what) {
  std::ofstream file(path);
  if (!file || !(file << text))
    throw std::runtime_error(std::string("cannot write the ") + what + " " + path + " (check the directory exists and is writable)");
}

// The nodes to sweep as Slurm sees them, in the order of --nodelist when given.
std::vector<NodeState> list_nodes(const HealthOptions& o) {
  std::vector<std::string> argv{"sinfo", "-h", "-N", "-o", std::string(kSinfoFormat)};
  std::vector<std::string> wanted;
  if (!o.partition.empty()) argv.insert(argv.end(), {"-p", o.partition});
  if (!o.nodelist.empty()) {
    try {
      wanted = expand_hostlist(o.nodelist);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--nodelist: ") + e.what());
    }
    argv.insert(argv.end(), {"-n", o.nodelist});
  }
  const auto [status, output] = run_capture(argv);
  if (status != 0)
    throw std::runtime_error(shell_line(argv) + " failed (exit " + std::to_string(status) + "): " + quote_bounded(output, 300) +
                             "; is SLURM_CONF right, is slurmctld up?");
  auto nodes = parse_sinfo_nodes(output);
  if (wanted.empty()) {
    if (nodes.empty())
      throw UsageError("partition '" + o.partition + "' has no nodes (sinfo -p " + o.partition +
                       " lists none): check the name with sinfo -s");
    return nodes;
  }
  std::vector<NodeState> ordered;
  for (const std::string& name : wanted) {
    if (std::any_of(ordered.begin(), ordered.end(), [&](const NodeState& n) { return n.node == name; })) continue;
    const auto found = std::find_if(nodes.begin(), nodes.end(), [&](const NodeState& n) { return n.node == name; });
    if (found != nodes.end())
      ordered.push_back(*found);
    else
      ordered.push_back({name, "unknown", o.partition.empty() ? "not known to Slurm" : "not in partition " + o.partition, false});
  }
  return ordered;
}

class Sweep {
 public:
  Sweep(const HealthOptions& options, std::string work_dir) : o_(options), work_dir_(std::move(work_dir)) {}

  // Runs one batch of disjoint jobs at once and appends their runs.
  void run_batch(const std::vector<std::vector<std::string>>& batch, Phase phase) {
    if (batch.empty()) return;
    std::vector<BoundedJob> jobs;
    std::vector<std::string> json_paths;
    for (const auto& nodes : batch) {
      // Numbered, and named by its nodes when a pair: a group of 64 names would pass NAME_MAX.
      const std::string stem =
          work_dir_ + "/" + std::to_string(++job_count_) + "-" +
          (nodes.size() == 2 ? join(nodes, "-") : "group" + std::to_string(nodes.size()) + "-" + nodes.front() + "-to-" + nodes.back());
      json_paths.push_back(stem + ".json");
      remove_stale(json_paths.back());
      jobs.push_back({srun_command(nodes, o_.job, json_paths.back()), stem + ".log"});
    }
    const char* kind = phase == Phase::group ? "group" : "pair";
    const auto ends = run_bounded(
        jobs, o_.job.pair_timeout_s,
        [&](std::size_t i) {
          progress(std::string(to_string(phase)) + ": " + kind + " " + join(batch[i], "+") + " started (log " + jobs[i].log_path + ")");
        },
        [&](std::size_t i, const JobEnd& end) {
          SweepRun run = judge_job(batch[i], phase, end.exit_code, end.timed_out, end.seconds, read_own_file(jobs[i].log_path).value_or(""),
                                   read_own_file(json_paths[i]));
          progress(std::string(to_string(phase)) + ": " + kind + " " + join(batch[i], "+") + " " +
                   (run.outcome == Outcome::measured ? "busbw " + short_number(run.busbw) + " GB/s" : std::string(to_string(run.outcome))) +
                   " in " + short_number(end.seconds) + " s" + (run.detail.empty() ? "" : " (" + run.detail + ")"));
          runs_.push_back(std::move(run));
        });
    (void)ends;
  }

  std::vector<SweepRun>& runs() { return runs_; }

 private:
  const HealthOptions& o_;
  std::string work_dir_;
  int job_count_ = 0;
  std::vector<SweepRun> runs_;
};

std::vector<std::vector<std::string>> as_batch(const std::vector<NodePair>& pairs) {
  std::vector<std::vector<std::string>> batch;
  for (const auto& [a, b] : pairs) batch.push_back({a, b});
  return batch;
}

// Slurm's block topology (health/block_topology.hpp): from --block-topology FILE, else from
// scontrol show topology. None (topology/tree, no topology plugin, an older scontrol): no blocks,
// and the report has no block section.
std::vector<Block> read_blocks(const HealthOptions& o) {
  std::string text;
  if (!o.block_topology.empty()) {
    const auto file = read_text(o.block_topology);
    if (!file) throw UsageError("cannot read --block-topology " + o.block_topology + " (give a topology.conf with BlockName= lines)");
    text = *file;
  } else {
    const auto [status, output] = run_capture({"scontrol", "show", "topology"});
    if (status != 0) return {};
    text = output;
  }
  try {
    return parse_block_topology(text);
  } catch (const std::invalid_argument& e) {
    progress(std::string("block topology ignored: ") + e.what());
    return {};
  }
}

// Runs check-node on every usable node in one job, then takes the nodes that fail it out of
// `usable`. A node that gave no result stays in the sweep (its pairs will say more).
NodeCheckSummary run_node_checks(const HealthOptions& o, const std::string& work_dir, std::vector<std::string>& usable) {
  NodeCheckSummary summary;
  if (o.node_check.machine_type.empty() || usable.empty()) return summary;
  NodeCheckOptions options = o.node_check;
  if (options.program.empty()) options.program = o.job.launcher;
  options.srun_args = o.job.srun_args;
  options.timeout_s = o.job.pair_timeout_s;
  // Each node's result and error files are this job's alone (srun creates them anew).
  for (const std::string& node : usable) {
    remove_stale(node_check_path(work_dir, node));
    remove_stale(work_dir + "/check-node-" + node + ".log");
  }
  const BoundedJob job{node_check_command(usable, options, work_dir), work_dir + "/check-node.log"};
  progress("node check: check-node --machine-type " + options.machine_type + " on " + std::to_string(usable.size()) + " nodes (log " +
           job.log_path + ")");
  const auto ends = run_bounded({job}, options.timeout_s, nullptr, nullptr);
  std::map<std::string, nlohmann::json> facts;
  std::vector<std::string> passed;
  for (const std::string& node : usable) {
    const auto text = read_own_file(node_check_path(work_dir, node));
    const auto result = text ? node_check_result(node, *text) : std::nullopt;
    if (!result) {
      progress("node check: " + node + " gave no result (see " + job.log_path + " and " + work_dir + "/check-node-" + node +
               ".log); it stays in the sweep");
      passed.push_back(node);
      continue;
    }
    facts[node] = result->facts;
    if (result->ok) {
      passed.push_back(node);
      continue;
    }
    progress("node check: " + node + " fails (" + result->reason + "): " + result->comment + "; left out of the pairs");
    NodeVerdict v;
    v.node = node;
    v.verdict = Verdict::bad;
    v.node_check = "check-node " + result->reason + ": " + result->comment;
    summary.failed.push_back(std::move(v));
    summary.drains.emplace_back(node, result->reason);
    summary.comments[node] = result->comment;
  }
  const auto odd = odd_ones_out(facts);
  for (const OddOneOut& out : odd)
    for (const std::string& line : describe(out)) progress("fleet: " + line);
  summary.fleet = to_json(odd);
  if (ends.front().timed_out) progress("node check: the job did not finish within " + short_number(options.timeout_s) + " s");
  usable = std::move(passed);
  return summary;
}

int sweep_and_report(const HealthOptions& o, const std::string& work_dir, const std::vector<NodeState>& states,
                     const std::vector<std::string>& usable, std::vector<NodeVerdict> skipped, std::optional<double> given,
                     const std::set<std::string>& resumed_for_test, std::map<std::string, std::string> old_reason,
                     const NodeCheckSummary& checked);

int run_health(HealthOptions o) {
  if (o.partition.empty() && o.nodelist.empty()) throw UsageError("give --partition P or --nodelist LIST (the nodes to sweep)");
  std::optional<double> given;
  if (o.threshold >= 0) given = o.threshold;
  if (!o.machine_type.empty() && !machine_type_threshold(o.machine_type))
    throw UsageError("unknown --machine-type '" + o.machine_type + "': known are " + known_machine_types() + "; or give --threshold GBPS");
  if (o.job.launcher.empty()) {
    std::error_code error;
    o.job.launcher = std::filesystem::read_symlink("/proc/self/exe", error).string();
    if (error) throw UsageError("cannot find this binary's path (/proc/self/exe): give --launcher PATH");
  }
  std::string work_dir;
  try {
    work_dir = prepare_work_dir(o.work_dir, "gpudirect-health");
  } catch (const WorkDirError& e) {
    throw UsageError(e.what());
  }

  // Which nodes, and which of them can run now.
  auto states = list_nodes(o);
  std::set<std::string> resumed_for_test;
  std::map<std::string, std::string> old_reason;
  std::vector<std::string> to_resume;
  if (o.resume) {
    for (NodeState& n : states) {
      if (!drained_state(n.state) || !drained_by_us(n.reason)) continue;
      to_resume.push_back(n.node);
      old_reason[n.node] = n.reason;
      n.usable = true;
    }
  }
  std::vector<std::string> usable;
  std::vector<NodeVerdict> skipped;
  for (const NodeState& n : states) {
    if (n.usable)
      usable.push_back(n.node);
    else {
      progress("skipping " + n.node + ": " + n.state + (n.reason.empty() || n.reason == "none" ? "" : " (" + n.reason + ")"));
      NodeVerdict v;
      v.node = n.node;
      v.verdict = Verdict::skipped;
      v.slurm_state = n.state + (n.reason.empty() || n.reason == "none" ? "" : ": " + n.reason);
      skipped.push_back(std::move(v));
    }
  }
  if (usable.size() < 2)
    throw std::runtime_error("only " + std::to_string(usable.size()) + " of " + std::to_string(states.size()) +
                             " nodes can run a job now (the others are down, drained or not responding): a pair needs 2");
  try {
    for (const std::string& node : to_resume) {
      progress("resume: " + node + " was drained by us (" + old_reason[node] + "): back in service to be measured");
      run_scontrol(resume_command(node));
      resumed_for_test.insert(node);
    }
    const NodeCheckSummary checked = run_node_checks(o, work_dir, usable);
    return sweep_and_report(o, work_dir, states, usable, std::move(skipped), given, resumed_for_test, old_reason, checked);
  } catch (...) {
    // Interrupted or failed midway: the nodes we took back untested go back to where they were.
    for (const std::string& node : resumed_for_test) {
      try {
        run_scontrol(drain_command(node, old_reason[node]));
        progress("drained " + node + " again (not measured): " + old_reason[node]);
      } catch (const std::exception& e) {
        progress(std::string("could not drain ") + node + " again: " + e.what() + "; drain it by hand");
      }
    }
    throw;
  }
}

int sweep_and_report(const HealthOptions& o, const std::string& work_dir, const std::vector<NodeState>& states,
                     const std::vector<std::string>& usable, std::vector<NodeVerdict> skipped, std::optional<double> given,
                     const std::set<std::string>& resumed_for_test, std::map<std::string, std::string> old_reason,
                     const NodeCheckSummary& checked) {
  progress("sweeping " + std::to_string(usable.size()) + " nodes (" + std::to_string(skipped.size()) + " skipped); logs in " + work_dir);

  Sweep sweep(o, work_dir);
  const FirstPass first = first_pass_pairs(usable);
  sweep.run_batch(as_batch(first.pairs), Phase::first_pass);
  if (!sweep.runs().empty() &&
      std::none_of(sweep.runs().begin(), sweep.runs().end(), [](const SweepRun& r) { return r.outcome == Outcome::measured; }))
    progress("no pair measured anything: when every job fails the same way the job options are more likely wrong than the nodes (first: " +
             sweep.runs().front().detail + "; logs in " + work_dir + ")");
  SweepResult result;
  result.blocks = read_blocks(o);
  if (!result.blocks.empty())
    progress("block topology: " + std::to_string(result.blocks.size()) +
             " blocks; pairs inside a block (NVLink) are reported apart from pairs across blocks (RoCE)");
  result.threshold = choose_threshold(given, o.machine_type, o.median_factor, sweep.runs());
  result.machine_type = o.machine_type;
  progress("threshold " + short_number(result.threshold.gbps) + " GB/s (" + result.threshold.source + ")");

  // Second pass: each suspect (and an odd node out) next to a node that passed.
  auto verdicts = judge_nodes(usable, sweep.runs(), result.threshold.gbps);
  std::vector<std::string> second = suspects(verdicts);
  if (!first.left_over.empty()) second.push_back(first.left_over);
  const auto good = nodes_with(verdicts, Verdict::good);
  for (const auto& round : second_pass_rounds(second, good)) sweep.run_batch(as_batch(round), Phase::second_pass);
  if (!second.empty() && good.empty()) progress("second pass: no node passed, so no suspect can be told apart from its peer");
  verdicts = judge_nodes(usable, sweep.runs(), result.threshold.gbps);

  if (o.groups) {
    const auto good_now = nodes_with(verdicts, Verdict::good);
    for (std::size_t size : growing_group_sizes(good_now.size())) sweep.run_batch(groups_of(good_now, size), Phase::group);
  }

  // Drain lines for the bad nodes; nodes we resumed for the test that still do not pass go back.
  for (const NodeVerdict& v : verdicts) {
    if (v.verdict == Verdict::bad)
      result.drains.emplace_back(v.node, drain_reason(sweep.runs()[*v.evidence], v.node, result.threshold.gbps));
    else if (resumed_for_test.count(v.node) && v.verdict != Verdict::good)
      result.drains.emplace_back(v.node, old_reason[v.node]);
  }
  result.nodes = verdicts;
  for (auto& v : skipped) result.nodes.push_back(std::move(v));
  for (const NodeVerdict& v : checked.failed) result.nodes.push_back(v);
  result.drains.insert(result.drains.end(), checked.drains.begin(), checked.drains.end());
  result.drain_comments = checked.comments;
  result.fleet = checked.fleet;
  // In the order Slurm (or --nodelist) gave them.
  std::map<std::string, std::size_t> order;
  for (std::size_t i = 0; i < states.size(); ++i) order[states[i].node] = i;
  std::stable_sort(result.nodes.begin(), result.nodes.end(),
                   [&](const NodeVerdict& a, const NodeVerdict& b) { return order[a.node] < order[b.node]; });
  result.runs = std::move(sweep.runs());
  result.timestamp = static_cast<long long>(std::time(nullptr));

  std::fputs(report_table(result).c_str(), stdout);
  std::fflush(stdout);
  // A file that cannot be written must not stop the drains: report it, and exit 1 at the end.
  bool output_failed = false;
  const auto output = [&](const std::string& path, const std::function<void()>& write) {
    if (path.empty()) return;
    try {
      write();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpudirect health: %s\n", e.what());
      output_failed = true;
    }
  };
  output(o.json, [&] { write_text(o.json, report_json(result).dump(2) + "\n", "--json file"); });
  output(o.svg, [&] {
    write_text(o.svg,
               heat_map_svg(result.nodes, result.runs, result.threshold.gbps, "gpudirect health: all_gather busbw per node pair and group"),
               "--svg file");
  });
  output(o.metrics_file, [&] { health_metrics(result).write(o.metrics_file); });

  for (const auto& [node, reason] : result.drains) {
    if (!o.drain && !resumed_for_test.count(node)) continue;
    const auto comment = result.drain_comments.find(node);
    run_scontrol(drain_command(node, reason, comment == result.drain_comments.end() ? "" : comment->second));
    progress("drained " + node + ": " + reason);
  }
  if (!o.drain && !result.drains.empty() && result.drains.size() > resumed_for_test.size())
    progress("run again with --drain to drain the bad nodes, or run the scontrol lines above");
  for (const std::string& node : resumed_for_test)
    if (std::any_of(result.nodes.begin(), result.nodes.end(),
                    [&](const NodeVerdict& v) { return v.node == node && v.verdict == Verdict::good; }))
      progress("resumed " + node + ": it passes now");

  const auto bad = nodes_with(result.nodes, Verdict::bad), unsure = nodes_with(result.nodes, Verdict::suspect);
  const auto untested = nodes_with(result.nodes, Verdict::untested);
  if (!bad.empty() || !unsure.empty()) {
    progress(std::to_string(bad.size()) + " bad node(s)" + (bad.empty() ? "" : ": " + join(bad, ",")) +
             (unsure.empty() ? "" : "; suspect (no good peer to tell them apart): " + join(unsure, ",")));
    return kExitBadNodes;
  }
  if (output_failed) return kExitFailure;
  if (!untested.empty()) {
    progress("not measured: " + join(untested, ",") + " (their jobs never started: busy nodes? see the logs in " + work_dir + ")");
    return kExitFailure;
  }
  progress("all " + std::to_string(usable.size()) + " swept nodes passed");
  return kExitOk;
}

}  // namespace

void register_health(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<HealthOptions>();
  CLI::App* health = app.add_subcommand(
      "health",
      "Sweep a partition or node list for bad nodes, with Slurm as the engine: disjoint node pairs each run "
      "`srun -N2 -w A,B ... gpudirect-launch bench all_gather`, all at once; each node of a failing pair then runs "
      "with a node that passed, so the verdict names the bad node (one that fails with a good peer too). Down, drained "
      "and not responding nodes are skipped and reported. A pair runs at most --pair-timeout seconds. Prints a table "
      "(node, pairs, verdict, busbw per pair) and, for every bad node, the scontrol line that drains it. Threshold: "
      "--threshold, else --machine-type's (" +
          known_machine_types() +
          ", all_gather 2G-8G between 2 nodes as Google's "
          "cluster-health-scanner), else --median-factor x the median busbw of the sweep's pairs. "
          "Exit codes: 0 every swept node passed, 7 bad or suspect nodes found, 1 the sweep could not run or a node could "
          "not be measured, 6 usage.");
  health->add_option("-p,--partition", o->partition, "sweep the nodes of this partition");
  health->add_option("--nodelist", o->nodelist,
                     "sweep these nodes (Slurm host list, e.g. a3mega-[001-064]); with --partition: those in it");
  health->add_option("--ntasks-per-node", o->job.tasks_per_node, "ranks per node (default 8: one per GPU of an A3 node)")
      ->check(CLI::Range(1, 1024));
  health->add_option("--gpus-per-task", o->job.gpus_per_task, "GPUs per rank (default 1; 0: do not ask srun for GPUs)")
      ->check(CLI::Range(0, 64));
  health->add_option("--gpu-direct", o->job.gpu_direct, "pass --gpu-direct=MODE to srun (the plugin's mode, e.g. tcpxo on A3 Mega)");
  health->add_option("--srun-arg", o->job.srun_args, "one more srun option, as given (repeat it): e.g. --srun-arg=--reservation=maint");
  health->add_option("--launcher", o->job.launcher, "gpudirect-launch as the nodes see it (default: this binary's path)");
  health->add_option("-b,--minbytes", o->job.min_bytes, "bench's smallest size (default 2G)");
  health->add_option("-e,--maxbytes", o->job.max_bytes, "bench's largest size (default 8G)");
  health->add_option("-f,--stepfactor", o->job.step_factor, "bench's size factor between rows (default 2)");
  health->add_option("-n,--iters", o->job.iters, "bench's timed iterations per size (default 20)")->check(CLI::Range(1, 1000000000));
  health->add_option("-w,--warmup_iters", o->job.warmup, "bench's untimed iterations first (default 5)")->check(CLI::Range(0, 1000000000));
  health->add_option("--bench-arg", o->job.bench_args, "one more bench option, as given (repeat it): e.g. --bench-arg=--backend=nccl");
  health
      ->add_option("--pair-timeout", o->job.pair_timeout_s,
                   "seconds a pair (or group) job may take, queueing included, before it is ended "
                   "and counted failed (default 300)")
      ->check(CLI::Range(1.0, 86400.0));
  health->add_flag("--groups", o->groups,
                   "after the pairs, run the nodes that passed in growing disjoint groups (4, 8, 16 ...): reported, "
                   "never drained (a slow group does not name its node)");
  health->add_option("--machine-type", o->machine_type, "the nodes' machine type, for its known threshold: " + known_machine_types());
  health->add_option("--threshold", o->threshold, "a pair passes at or above this all_gather busbw, GB/s")->check(CLI::Range(0.0, 1e9));
  health
      ->add_option("--median-factor", o->median_factor,
                   "without --threshold or --machine-type: a pair passes at or above this x the "
                   "median busbw of the first pass (default 0.7)")
      ->check(CLI::Range(0.01, 1.0));
  health->add_option("--block-topology", o->block_topology,
                     "a topology.conf with BlockName= lines (topology/block) instead of scontrol show topology: the report "
                     "lists pairs inside a block (NVLink, e.g. an A4X NVL72 domain) apart from pairs across blocks (RoCE)");
  health->add_option("--json", o->json, "write nodes, verdicts, every run and the threshold as JSON to this file");
  health->add_option(
      "--svg", o->svg,
      "write the sweep as an SVG heat map to this file (open it in a browser): a tile per node with its pairs, a bar per --groups group");
  health->add_option(
      "--metrics-file", o->metrics_file,
      "write per node busbw, verdict and the sweep's time in the Prometheus text "
      "format to this file, for node_exporter's textfile collector (e.g. /var/lib/node_exporter/textfile/gpudirect_health.prom); "
      "with --machine-type every sample is labelled machine_type");
  health->add_option("--work-dir", o->work_dir,
                     "each job's log and bench JSON go here; on a real cluster a directory the nodes share. Created with mode "
                     "0700 if absent; an existing one must be yours and not writable by group or others "
                     "(default: a new ./gpudirect-health-DATE-TIME-XXXXXX)");
  health->add_option("--node-check", o->node_check.machine_type,
                     "first run `gpudirect-launch check-node --machine-type TYPE` on every node in one job (one task per node): a node "
                     "that fails it is named with check-node's finding, left out of the pairs and drained with its reason (XID, "
                     "PERFORMANCE, unspecified) by --drain; the nodes' driver, CUDA, NCCL and net plugin are compared and the odd ones "
                     "out named (reported, not drained)");
  health->add_option("--node-check-arg", o->node_check.check_args,
                     "one more check-node option, as given (repeat it): e.g. --node-check-arg=--expectations-dir=/etc/gpudirect");
  health
      ->add_option("--node-check-gpus", o->node_check.gpus_per_node,
                   "GPUs per node the node check's job asks for, so NVML sees them all under ConstrainDevices (default 8; 0: none)")
      ->check(CLI::Range(0, 64));
  health->add_option("--node-check-program", o->node_check.program, "the program run as PROGRAM check-node ... (default: --launcher)");
  health->add_flag("--drain", o->drain,
                   "drain the bad nodes (scontrol update ... state=drain, reason \"gpudirect health: ...\"); needs a Slurm admin");
  health->add_flag("--resume", o->resume,
                   "also measure the nodes we drained before (reason starts with \"gpudirect health:\"): they are "
                   "resumed for the sweep, stay in service if they pass and are drained again if not; keep jobs off them meanwhile with "
                   "a maintenance reservation (--srun-arg=--reservation=NAME)");
  health->callback([o, &context] {
    o->job.bench_timeout_s = std::chrono::duration<double>(context.session.timeout).count();
    context.exit_code = run_command("gpudirect health", [&] { return run_health(*o); });
  });
}

}  // namespace gpudirect::launcher
