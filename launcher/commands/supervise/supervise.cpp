// `gpudirect-launch supervise`: training that heals itself inside its allocation. Run once by the
// sbatch script (not under srun), it trains on all but --spare-nodes of the job's nodes and, when a
// rank fails, the step hangs, a node straggles or every step slows down, it names the node, proves
// it bad (check-node, or the pair test), drains it with the reason slurm-gcp's repair acts on,
// and resumes from the newest checkpoint on the healthy nodes plus a spare. Only the outline lives
// here; each rule has its own file (fault_watch, node_pool, rank_reports, node_checks, goodput).
#include "command_registry.hpp"

#include "supervise/event_log.hpp"
#include "supervise/fault_watch.hpp"
#include "supervise/goodput.hpp"
#include "supervise/node_checks.hpp"
#include "supervise/node_pool.hpp"
#include "supervise/rank_reports.hpp"
#include "supervise/supervise_options.hpp"
#include "supervise/training_step.hpp"

#include "command_errors.hpp"
#include "node_drain.hpp"
#include "shell_words.hpp"
#include "work_dir.hpp"

#include "gpudirect/hostlist.hpp"
#include "gpudirect/text.hpp"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <thread>

namespace gpudirect::launcher {
namespace supervise {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
void on_stop_signal(int signal) { g_stop_signal = signal; }

// After srun's abort, before it is killed and the step cancelled by id.
constexpr double kAbortGrace = 5;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void say(const std::string& line) {
  std::printf("gpudirect supervise: %s\n", line.c_str());
  std::fflush(stdout);
}

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", s);
  return text;
}

// How an attempt ended.
struct AttemptEnd {
  std::optional<Fault> fault;  // none: it ran to its end (exit_code 0) or stopped on our signal
  int exit_code = 0;
};

class Supervisor {
 public:
  Supervisor(SuperviseOptions o, TrainPlan plan, std::vector<std::string> nodes, std::string work_dir, std::string job_id)
      : o_(std::move(o)),
        plan_(std::move(plan)),
        pool_(std::move(nodes), o_.spare_nodes),
        work_dir_(std::move(work_dir)),
        job_id_(std::move(job_id)),
        log_(o_.json, o_.metrics_file),
        watch_(o_.watch),
        goodput_(now_s()),
        training_nodes_(pool_.training().size()) {
    goodput_.set_planned_steps(plan_.steps);
    goodput_.set_job_id(job_id_);
    goodput_.set_spares_left(static_cast<int>(pool_.spares().size()));
  }

  int run() {
    say("job " + job_id_ + ": training on " + join(pool_.training(), ",") + "; spares " +
        (pool_.spares().empty() ? std::string("none") : join(pool_.spares(), ",")) + "; checkpoint " + plan_.checkpoint + "; work dir " +
        work_dir_);
    for (int attempt = 1;; ++attempt) {
      if (attempt > o_.max_restarts + 1) {
        say("stopping: " + std::to_string(o_.max_restarts) + " restarts used (--max-restarts); the checkpoint " + plan_.checkpoint +
            " holds the progress");
        return finish(kExitFailure);
      }
      const AttemptEnd end = run_attempt(attempt);
      if (!end.fault) {
        if (g_stop_signal != 0) {
          say(std::string("stopped by ") + (g_stop_signal == SIGUSR1 ? "SIGUSR1" : "SIGTERM") +
              ": the ranks finished their step and wrote the checkpoint; resubmit (or requeue) the job to continue");
          return finish(kExitPreempted);
        }
        return finish(end.exit_code);
      }
      if (g_stop_signal != 0) {
        say("stopped by a signal while handling a fault; the checkpoint " + plan_.checkpoint + " holds the progress");
        return finish(kExitPreempted);
      }
      if (end.fault->kind == FaultKind::rank_failure && end.exit_code == kExitUsage) {
        say("train refused its options (exit 6; see above): no node is at fault, fix the options after --");
        return finish(kExitUsage);
      }
      const std::size_t out_before = pool_.taken_out().size();
      const bool progressed = watch_.steps_this_attempt() > 0;
      if (!handle(*end.fault, attempt)) return finish(kExitNoSpare);
      // A step that fails before its first step twice in a row on nodes that pass their checks is
      // not failing for a node: srun refusing the step, a missing file, a wrong option.
      failed_starts_ = progressed || pool_.taken_out().size() > out_before ? 0 : failed_starts_ + 1;
      if (failed_starts_ >= 2) {
        say("the training step failed twice before its first step on nodes that pass their checks: that is no node fault; see " +
            work_dir_ + "/attempt-" + std::to_string(attempt) + ".log (" + last_error_line() + ")");
        return finish(kExitFailure);
      }
    }
  }

 private:
  // Launches the step on the training nodes and watches it until it ends or a rule sees a fault;
  // a faulty step is stopped (asked, then aborted, then killed) before this returns.
  AttemptEnd run_attempt(int number) {
    Attempt a;
    a.number = number;
    a.nodes = pool_.training();
    a.json_path = work_dir_ + "/attempt-" + std::to_string(number) + ".jsonl";
    a.log_path = work_dir_ + "/attempt-" + std::to_string(number) + ".log";
    const std::vector<std::string> argv = training_step_command(o_, a);
    say("attempt " + std::to_string(number) + " on " + join(a.nodes, ",") + ": " + shell_line(argv));
    const double launched = now_s();
    goodput_.relaunched(launched);
    watch_.attempt_started(launched);
    log_.event({{"type", "launch"}, {"attempt", number}, {"nodes", a.nodes}, {"command", shell_line(argv)}});
    TrainingStep step(argv, a);
    LineTail output(a.log_path), json(a.json_path);
    step_output_.clear();

    AttemptEnd end;
    bool stopping = false, aborted = false;
    double stop_asked = 0, task_failed_at = 0;
    const auto stop = [&](bool gently) {
      if (stopping) return;
      stopping = true;
      stop_asked = now_s();
      if (gently) {
        step.ask_to_stop();
      } else {
        step.abort();
        aborted = true;
      }
    };
    for (;;) {
      relay(output.read_new(), task_failed_at);
      for (const std::string& line : json.read_new()) take_train_line(line, number);
      const double now = now_s();
      if (const std::optional<int> code = step.poll()) {
        relay(output.read_new(), task_failed_at);
        for (const std::string& line : json.read_new()) take_train_line(line, number);
        end.exit_code = *code;
        if (!end.fault && !(g_stop_signal != 0 && *code == kExitPreempted) && *code != 0)
          end.fault =
              Fault{FaultKind::rank_failure, "",
                    "the training step ended with exit " + std::to_string(*code) + (task_failed_at > 0 ? " after a rank failed" : ""),
                    watch_.last_progress()};
        if (end.fault)
          goodput_.fault(to_string(end.fault->kind), end.fault->last_progress, fault_seen_ > 0 ? fault_seen_ : now, end.fault->excess_s);
        return end;
      }
      if (g_stop_signal != 0) stop(true);
      if (!end.fault && !stopping) {
        if (std::optional<Fault> fault = watch_.check(now)) {
          fault_seen_ = now;
          say("fault in attempt " + std::to_string(number) + ": " + to_string(fault->kind) +
              (fault->host.empty() ? "" : " on " + fault->host) + ": " + fault->detail);
          // A straggler or slow steps still make progress: the ranks finish the step and write the
          // checkpoint, so nothing is lost. A hang cannot: abort.
          const bool gently = fault->kind == FaultKind::straggler || fault->kind == FaultKind::slow_steps;
          end.fault = std::move(fault);
          stop(gently);
        } else if (task_failed_at > 0 && now - task_failed_at > 2) {
          // A rank ended with an error and srun waits for the others: a lost node's tasks never
          // report, and srun would wait until Slurm declares the node down. The survivors have
          // said what they know: srun goes, and the step is cancelled by id.
          fault_seen_ = task_failed_at;
          end.fault = Fault{FaultKind::rank_failure, "", "a rank of the training step failed", watch_.last_progress()};
          say("a rank failed and srun still waits after 2 s: ending the step");
          step.kill();
          continue;
        }
      }
      if (stopping) {
        const double waited = now - stop_asked;
        // Asked to stop: the step in flight and the checkpoint write may take their allowances.
        // Aborted: srun waits for the tasks of a node that no longer answers until Slurm declares
        // it down; the step is cancelled by id instead.
        const double allowed = o_.stop_grace_s + std::max(o_.watch.checkpoint_s, 0.0);
        if (!aborted && waited > allowed) {
          say("the step did not stop within " + seconds(allowed) + " of the request: aborting it");
          step.abort();
          aborted = true;
          stop_asked = now;
        } else if (aborted && waited > kAbortGrace) {
          say("srun did not end within " + seconds(kAbortGrace) + " of its abort: killing it and cancelling the step");
          step.kill();
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  // The step's output, passed on as it comes, and kept for naming the lost node.
  void relay(const std::vector<std::string>& lines, double& task_failed_at) {
    for (const std::string& line : lines) {
      std::printf("%s\n", line.c_str());
      step_output_ += line + "\n";
      if (task_failed_at == 0 && line.rfind("srun: error: ", 0) == 0 && line.find(": task") != std::string::npos) task_failed_at = now_s();
    }
    std::fflush(stdout);
  }

  void take_train_line(const std::string& line, int attempt) {
    log_.train_line(line, attempt);
    const auto record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_discarded() || !record.is_object()) return;
    const std::string type = record.value("type", "");
    const double now = now_s();
    if (type == "step") {
      StepRecord r;
      r.step = record.value("step", 0L);
      r.step_ms = record.value("step_ms", 0.0);
      if (record.contains("straggler") && record["straggler"].is_object()) {
        const auto& s = record["straggler"];
        r.straggler = s.value("host", "");
        char detail[160];
        std::snprintf(detail, sizeof detail, "rank %d on %s computed %.1f ms, median %.1f ms", s.value("rank", -1), r.straggler.c_str(),
                      s.value("compute_ms", 0.0), s.value("median_compute_ms", 0.0));
        r.detail = detail;
      }
      // train writes the checkpoint every --checkpoint-every steps and after the last one.
      const bool checkpoint_due = (plan_.checkpoint_every > 0 && r.step % plan_.checkpoint_every == 0) || r.step >= plan_.steps;
      watch_.step(r, now, checkpoint_due);
      goodput_.step(r.step, r.step_ms, now);
      log_.metrics(goodput_.report(now), false);
    } else if (type == "checkpoint") {
      watch_.checkpoint_written(record.value("seconds", 0.0), now);
    }
  }

  // Names the node, proves it bad, takes it out and drains it, and fills the training set again
  // from the spares. False when no spare is left.
  bool handle(const Fault& fault, int attempt) {
    fault_seen_ = 0;
    std::vector<NodeFinding> bad;
    std::vector<std::string> cleared;  // blamed, checked, found nothing
    const std::string dir = round_dir(attempt);
    const Progress progress = [](const std::string& line) { say(line); };
    std::vector<std::string> blamed;
    std::set<std::string> proven;  // named by the pair test: its measurement is the proof
    if (fault.kind == FaultKind::straggler) {
      blamed = {fault.host};
    } else if (fault.kind == FaultKind::slow_steps) {
      say("every rank is slowed alike: the pair test names the node");
      for (NodeFinding& f : sweep_pairs(pool_.training(), o_, dir, progress)) {
        blamed.push_back(f.node);
        proven.insert(f.node);
        sweep_comment_[f.node] = f.comment;
      }
      if (blamed.empty()) say("the pair test names no node");
    } else {
      for (const std::string& host : blamed_hosts(step_output_, block_rank_hosts(pool_.training(), o_.ntasks_per_node)))
        if (pool_.is_training(host)) blamed.push_back(host);
      say(blamed.empty() ? "the ranks name no node: checking every training node"
                         : "the ranks name " + join(blamed, ",") + ": checking " + (blamed.size() == 1 ? "it" : "them"));
    }
    // A lost rank or a hang: every training node is checked (a step each, at once), not only the
    // named ones: the ranks next to a lost node stall too and are named as often as it is.
    std::vector<std::string> to_check = blamed;
    if (fault.kind != FaultKind::slow_steps && fault.kind != FaultKind::straggler) to_check = pool_.training();
    log_.event({{"type", "fault"}, {"attempt", attempt}, {"kind", to_string(fault.kind)}, {"detail", fault.detail}, {"blamed", blamed}});

    for (const NodeFinding& f : to_check.empty() ? std::vector<NodeFinding>{} : check_nodes(to_check, o_, dir, progress)) {
      log_.event(
          {{"type", "node_check"}, {"node", f.node}, {"answer", answer_name(f.answer)}, {"reason", f.reason}, {"comment", f.comment}});
      const bool was_blamed = std::find(blamed.begin(), blamed.end(), f.node) != blamed.end();
      if (f.answer != Answer::passed) {
        say(f.node + (f.answer == Answer::silent ? " gives no answer: " : " fails check-node (" + f.reason + "): ") + f.comment);
        bad.push_back(f);
      } else if (was_blamed) {
        cleared.push_back(f.node);
      }
    }
    // A node the checks prove bad explains the fault: the others it named are cleared, no more.
    const bool explained = !bad.empty();
    if (explained)
      for (const std::string& node : cleared)
        if (!proven.count(node)) say(node + " passes its check; " + bad.front().node + " explains the fault");
    for (const std::string& node : cleared) {
      if (explained && !proven.count(node)) continue;
      // The check finds nothing wrong with the node the fault points at: the first time that is a
      // transient fault (the same nodes go on); the second time the fault itself is the proof.
      // A node the pair test measured slow is proven already.
      if (!proven.count(node) && pool_.forgive_once(node)) {
        say(node + " passes its check: a transient fault, trying the same nodes again (once)");
        log_.event({{"type", "transient"}, {"node", node}, {"kind", to_string(fault.kind)}});
        continue;
      }
      NodeFinding again;
      again.node = node;
      again.answer = Answer::failed;
      const bool performance = fault.kind == FaultKind::straggler || fault.kind == FaultKind::slow_steps;
      again.reason = performance ? "PERFORMANCE" : "unspecified";
      const auto sweep = sweep_comment_.find(node);
      again.comment = sweep != sweep_comment_.end()
                          ? sweep->second
                          : "gpudirect supervise: " + std::string(to_string(fault.kind)) + " again after a passing check: " + fault.detail;
      say(node +
          (proven.count(node) ? " passes check-node, but the pair test measured it slow"
                              : " passes its check but is blamed a second time") +
          ": taken out (" + again.reason + ")");
      bad.push_back(again);
    }
    if (bad.empty() && cleared.empty()) say("no node is named or fails its check: trying the same nodes again");
    if (fault.kind == FaultKind::slow_steps && bad.empty()) watch_.relearn_normal();

    for (const NodeFinding& f : bad) {
      pool_.take_out(f.node);
      goodput_.taken_out(f.node, f.reason);
      drain(f.node, f.reason, f.comment);
    }
    return refill(attempt);
  }

  // Spares into the training set until it has its size again; a spare that fails its check is
  // drained and the next one tried.
  bool refill(int attempt) {
    while (pool_.training().size() < training_nodes_) {
      const std::optional<std::string> spare = pool_.take_spare();
      if (!spare) {
        say("no spare node left to replace " + join(pool_.taken_out(), ",") + " (" + std::to_string(pool_.training().size()) + " of " +
            std::to_string(training_nodes_) + " training nodes healthy): stopping, the checkpoint " + plan_.checkpoint +
            " holds the progress; exit " + std::to_string(kExitNoSpare) + " for the sbatch script to requeue");
        log_.event({{"type", "no_spare"}, {"taken_out", pool_.taken_out()}});
        goodput_.set_spares_left(0);
        return false;
      }
      const NodeFinding f =
          check_nodes({*spare}, o_, round_dir(attempt, "spare-" + *spare), [](const std::string& line) { say(line); }).front();
      log_.event({{"type", "node_check"},
                  {"node", f.node},
                  {"answer", answer_name(f.answer)},
                  {"reason", f.reason},
                  {"comment", f.comment},
                  {"spare", true}});
      if (f.answer != Answer::passed) {
        say("spare " + f.node + (f.answer == Answer::silent ? " gives no answer: " : " fails check-node (" + f.reason + "): ") + f.comment);
        pool_.take_out_spare(f.node);
        goodput_.taken_out(f.node, f.reason);
        drain(f.node, f.reason, f.comment);
        continue;
      }
      say("spare " + f.node + " passes its check: it trains from now on");
      pool_.add_training(f.node);
    }
    goodput_.set_spares_left(static_cast<int>(pool_.spares().size()));
    log_.event({{"type", "restart"}, {"attempt", attempt + 1}, {"nodes", pool_.training()}, {"spares", pool_.spares()}});
    return true;
  }

  void drain(const std::string& node, const std::string& reason, const std::string& comment) {
    const std::string text = clean_slurm_text(comment.rfind("gpudirect", 0) == 0 ? comment : "gpudirect supervise: " + comment);
    bool drained = true;
    try {
      run_scontrol(drain_command(node, reason, text));
      say("drained " + node + ": reason " + reason + ", comment '" + text + "'");
    } catch (const std::runtime_error& e) {
      // A user who is no Slurm admin cannot drain: the node still leaves this run, and the line
      // tells an operator what to run.
      drained = false;
      say("could not drain " + node + " (" + e.what() +
          "); it is left out of this run; an admin can run: " + drain_line(node, reason, text));
    }
    log_.event({{"type", "drain"}, {"node", node}, {"reason", reason}, {"comment", text}, {"drained", drained}});
  }

  // The last error line srun or a rank printed, for a message that must say why a step failed.
  std::string last_error_line() const {
    std::string last;
    std::size_t start = 0;
    while (start < step_output_.size()) {
      std::size_t end = step_output_.find('\n', start);
      if (end == std::string::npos) end = step_output_.size();
      const std::string line = step_output_.substr(start, end - start);
      if (line.find("error") != std::string::npos || line.find("gpudirect train:") != std::string::npos) last = line;
      start = end + 1;
    }
    return last.empty() ? "no error line" : last;
  }

  // Where the checks and pair tests of the fault that ended `attempt` keep their files.
  std::string round_dir(int attempt, const std::string& sub = "") const {
    const std::string dir = work_dir_ + "/fault-" + std::to_string(attempt) + (sub.empty() ? "" : "/" + sub);
    std::filesystem::create_directories(dir);
    return dir;
  }

  static const char* answer_name(Answer a) { return a == Answer::passed ? "passed" : a == Answer::failed ? "failed" : "silent"; }

  int finish(int exit_code) {
    const metrics::GoodputReport r = goodput_.report(now_s());
    say("at step " + std::to_string(r.last_step) + " of " + std::to_string(r.planned_steps) + ", " + std::to_string(r.steps) +
        " step(s) done in this allocation in " + std::to_string(r.attempts) + " attempt(s); wall " + seconds(r.wall_seconds) +
        ", productive " + seconds(r.productive_seconds) + ", effective training time ratio " + [&] {
          char t[16];
          std::snprintf(t, sizeof t, "%.3f", r.ettr());
          return std::string(t);
        }());
    for (std::size_t i = 0; i < r.faults.size(); ++i) {
      const metrics::FaultCost& f = r.faults[i];
      say("fault " + std::to_string(i + 1) + " (" + f.kind +
          "): " + (f.nodes.empty() ? std::string("transient, no node taken out") : join(f.nodes, ",") + " taken out (" + f.reason + ")") +
          "; lost " + seconds(f.lost_seconds()) + " = detection " + seconds(f.detection_seconds) + " + handling " +
          seconds(f.handling_seconds) + " + restart " + seconds(f.restart_seconds) + " + " + std::to_string(f.repeated_steps) +
          " repeated step(s) " + seconds(f.repeated_seconds));
    }
    nlohmann::json summary = to_json(r);
    summary["exit_code"] = exit_code;
    summary["taken_out"] = pool_.taken_out();
    log_.event(summary);
    log_.metrics(r, true);
    return exit_code;
  }

  SuperviseOptions o_;
  TrainPlan plan_;
  NodePool pool_;
  std::string work_dir_, job_id_;
  EventLog log_;
  FaultWatch watch_;
  Goodput goodput_;
  std::size_t training_nodes_;
  std::string step_output_;
  std::map<std::string, std::string> sweep_comment_;
  double fault_seen_ = 0;
  int failed_starts_ = 0;
};

std::vector<std::string> allocation_nodes() {
  const char* job = std::getenv("SLURM_JOB_ID");
  const char* list = std::getenv("SLURM_JOB_NODELIST");
  if (job == nullptr || list == nullptr || *list == '\0')
    throw UsageError(
        "supervise runs inside a Slurm allocation, once, from the batch script (sbatch --nodes=TRAINING+SPARES ...), not under "
        "srun: SLURM_JOB_ID or SLURM_JOB_NODELIST is not set");
  try {
    return expand_hostlist(list);
  } catch (const std::exception& e) {
    throw UsageError(std::string("SLURM_JOB_NODELIST '") + list + "': " + e.what());
  }
}

int run(SuperviseOptions o) {
  const TrainPlan plan = check_options(o);
  std::vector<std::string> nodes = allocation_nodes();
  if (o.launcher.empty()) {
    std::error_code error;
    o.launcher = std::filesystem::read_symlink("/proc/self/exe", error).string();
    if (error) throw UsageError("cannot find this binary's path (/proc/self/exe): give --launcher PATH");
  }
  std::string work_dir;
  try {
    work_dir = prepare_work_dir(o.work_dir.empty() ? plan.checkpoint + ".supervise" : o.work_dir, "gpudirect-supervise");
  } catch (const WorkDirError& e) {
    throw UsageError(e.what());
  }
  std::unique_ptr<Supervisor> supervisor;
  try {
    supervisor = std::make_unique<Supervisor>(o, plan, std::move(nodes), work_dir, std::getenv("SLURM_JOB_ID"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
  return supervisor->run();
}

}  // namespace
}  // namespace supervise

void register_supervise(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<supervise::SuperviseOptions>();
  CLI::App* cmd = app.add_subcommand(
      "supervise",
      "Training that heals itself inside its allocation: run once by the sbatch script (not under srun), it trains on all but "
      "--spare-nodes of the job's nodes (srun ... gpudirect-launch train TRAIN_OPTIONS --resume), and when a rank fails, the step hangs, "
      "one node straggles or every step slows down, it names the node (the ranks' reports, check-node, the pair test), drains it with "
      "the reason slurm-gcp's repair acts on (XID, PERFORMANCE, unspecified) and resumes from the checkpoint on the healthy nodes plus "
      "a spare. Exit codes: train's (0 done), 1 failure or --max-restarts used, 6 usage, 10 stopped by SIGTERM/SIGUSR1 (checkpoint "
      "written), 11 no spare node left (requeue the job).");
  cmd->add_option("--spare-nodes", o->spare_nodes,
                  "nodes of the allocation kept aside to replace a bad one (the last N of the node list; default 1)");
  cmd->add_option("--ntasks-per-node", o->ntasks_per_node, "ranks per node of every training step (default 1)");
  cmd->add_option("--srun-arg", o->srun_args,
                  "one more argument for every training step's srun, e.g. --srun-arg=--gpu-direct=tcpxo (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--rank-timeout", o->rank_timeout_s,
                  "gpudirect-launch --timeout for the ranks: a peer silent this long ends them, naming it (default 60 s)");
  cmd->add_option(
      "--straggler-steps", o->watch.straggler_steps,
      "act when the same node is the straggler (compute time over 1.2x the median) on K consecutive steps; 0: never (default 5)");
  cmd->add_option("--slow-steps", o->watch.slow_steps,
                  "act when K consecutive steps take over --slow-factor x the run's normal step; 0: never (default 5)");
  cmd->add_option("--slow-factor", o->watch.slow_factor, "how much slower than the normal step a slow step is (default 2)");
  cmd->add_option("--baseline-steps", o->watch.baseline_steps,
                  "the normal step is the median of the run's first N steps, each attempt's first left out (default 10)");
  cmd->add_option("--hang-factor", o->watch.hang_factor, "no step for this many normal steps (at least --hang-min) is a hang (default 20)");
  cmd->add_option("--hang-min", o->watch.hang_min_s, "the hang allowance is never under this (default 30 s)");
  cmd->add_option("--start-timeout", o->watch.start_s,
                  "from a training step's launch to its first step: rendezvous, loading the checkpoint, warm-up (default 300 s)");
  cmd->add_option("--checkpoint-timeout", o->watch.checkpoint_s,
                  "more allowance after a step that writes the checkpoint, at least 3x the longest write seen (default 120 s)");
  cmd->add_option("--node-check", o->node_check,
                  "machine type for check-node on a blamed node and on a spare before it is used (e.g. a3-megagpu-8g); without it "
                  "a node only has to run a step");
  cmd->add_option("--node-check-program", o->node_check_program,
                  "run as PROGRAM check-node --machine-type T --json ARGS (default: --launcher)");
  cmd->add_option("--node-check-arg", o->node_check_args, "one more check-node option (repeatable)");
  cmd->add_option("--check-timeout", o->check_timeout_s, "a node that gives no check result within this is taken out (default 60 s)");
  cmd->add_option("--sweep-arg", o->sweep_args,
                  "one more `health` option for the pair test that names the node when every step slows down, e.g. "
                  "--sweep-arg=--gpu-direct=tcpxo --sweep-arg=-b --sweep-arg=64M (repeatable)");
  cmd->add_option("--stop-grace", o->stop_grace_s,
                  "after asking a step to stop (SIGUSR1: finish the step, write the checkpoint): then srun aborts it (default 30 s)");
  cmd->add_option("--max-restarts", o->max_restarts, "give up after this many restarts (default 10)");
  cmd->add_option("--launcher", o->launcher, "gpudirect-launch as the nodes see it (default: this binary)");
  cmd->add_option(
      "--work-dir", o->work_dir,
      "each attempt's log and JSON lines, node checks, pair tests (default: CHECKPOINT.supervise, beside train's --checkpoint)");
  cmd->add_option("-J,--json", o->json,
                  "JSON lines: every attempt's train lines with \"attempt\", and the supervisor's launch, fault, node_check, transient, "
                  "drain, restart and goodput lines (appended)");
  cmd->add_option("--metrics-file", o->metrics_file,
                  "goodput for Prometheus' node_exporter textfile collector (gpudirect_supervise_* gauges: effective training time ratio, "
                  "time lost by cause, faults, drained nodes, spares left)");
  cmd->add_option("train_options", o->train_args, "train's options, after --: --preset, --steps, --checkpoint PATH (required) ...");
  cmd->callback([o, &context] { context.exit_code = run_command("gpudirect supervise", [&] { return supervise::run(*o); }); });
}

}  // namespace gpudirect::launcher
