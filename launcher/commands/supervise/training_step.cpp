#include "supervise/training_step.hpp"

#include "child_process.hpp"
#include "work_dir.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace gpudirect::launcher::supervise {

std::vector<std::string> training_step_command(const SuperviseOptions& o, const Attempt& a) {
  std::string list;
  for (const std::string& node : a.nodes) list += (list.empty() ? "" : ",") + node;
  std::vector<std::string> argv{"srun", "--nodes=" + std::to_string(a.nodes.size()), "--nodelist=" + list,
                                "--ntasks=" + std::to_string(a.nodes.size() * static_cast<std::size_t>(o.ntasks_per_node)),
                                "--ntasks-per-node=" + std::to_string(o.ntasks_per_node),
                                // A step of a lost node can linger in slurmctld until the node is
                                // declared down; the next step must not wait for its resources.
                                "--overlap", "--kill-on-bad-exit=1", "--job-name=" + a.step_name()};
  argv.insert(argv.end(), o.srun_args.begin(), o.srun_args.end());
  char timeout[32];
  std::snprintf(timeout, sizeof timeout, "%g", o.rank_timeout_s);
  for (const std::string& item : {o.launcher, std::string("--timeout"), std::string(timeout), std::string("train")}) argv.push_back(item);
  argv.insert(argv.end(), o.train_args.begin(), o.train_args.end());
  bool resume = false;
  for (const std::string& arg : o.train_args) resume = resume || arg == "--resume";
  if (!resume) argv.push_back("--resume");
  argv.push_back("-J");
  argv.push_back(a.json_path);
  return argv;
}

TrainingStep::TrainingStep(const std::vector<std::string>& argv, const Attempt& attempt) : attempt_(attempt) {
  remove_stale(attempt.json_path);
  const int log = create_run_file(attempt.log_path);
  try {
    pid_ = spawn(argv, log);
  } catch (...) {
    ::close(log);
    throw;
  }
  ::close(log);
}

TrainingStep::~TrainingStep() {
  if (!ended_) kill();
}

std::optional<int> TrainingStep::poll() {
  if (ended_) return exit_code_;
  int status = 0;
  const pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done != pid_) return std::nullopt;
  ended_ = true;
  exit_code_ = exit_code_of(status);
  return exit_code_;
}

void TrainingStep::ask_to_stop() {
  if (!ended_) ::kill(pid_, SIGUSR1);  // srun passes it to every task; train treats it as preemption
}

void TrainingStep::abort() {
  if (ended_) return;
  // srun's documented abort: a second SIGINT within a second cancels the step.
  ::kill(pid_, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(pid_, SIGINT);
}

void TrainingStep::kill() {
  if (!ended_) {
    ::kill(-pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    ended_ = true;
  }
  // srun is gone, but the step's tasks on the nodes that still answer may run on: cancel it by name.
  const char* job = std::getenv("SLURM_JOB_ID");
  if (job == nullptr) return;
  try {
    const auto [status, output] = run_capture({"squeue", "-h", "-s", "-j", job, "-o", "%i %j"}, 10);
    if (status != 0) return;
    std::istringstream lines(output);
    std::string id, name;
    while (lines >> id >> name)
      if (name == attempt_.step_name()) run_capture({"scancel", id}, 10);
  } catch (const std::runtime_error&) {
  }
}

std::vector<std::string> LineTail::read_new() {
  std::vector<std::string> lines;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return lines;
  in.seekg(offset_);
  std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  offset_ += static_cast<long long>(chunk.size());
  partial_ += chunk;
  std::size_t start = 0, end;
  while ((end = partial_.find('\n', start)) != std::string::npos) {
    lines.push_back(partial_.substr(start, end - start));
    start = end + 1;
  }
  partial_.erase(0, start);
  return lines;
}

}  // namespace gpudirect::launcher::supervise
