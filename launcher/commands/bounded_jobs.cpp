#include "bounded_jobs.hpp"

#include "child_process.hpp"
#include "work_dir.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace gpudirect::launcher {
namespace {

using Clock = std::chrono::steady_clock;
// srun's own cancel after SIGTERM, before SIGKILL. An srun killed before it has released its job
// leaves the job running until its --time: Slurm 24.11's srun at times takes ~10 s past its last
// task to exit (measured in a Debian 13 root), so 5 s was too short there.
constexpr auto kGrace = std::chrono::seconds(20);

volatile std::sig_atomic_t g_interrupted = 0;
void on_signal(int) { g_interrupted = 1; }

// Installs the handlers for the life of one run_bounded call.
class InterruptGuard {
 public:
  InterruptGuard() {
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
    g_interrupted = 0;
  }
  ~InterruptGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

}  // namespace

std::vector<JobEnd> run_bounded(const std::vector<BoundedJob>& jobs, double timeout_s, const std::function<void(std::size_t)>& on_start,
                                const std::function<void(std::size_t, const JobEnd&)>& on_end) {
  InterruptGuard guard;
  struct Running {
    pid_t pid = -1;
    Clock::time_point start, term_sent;
    bool done = false, terminated = false, killed = false;
  };
  std::vector<Running> running(jobs.size());
  std::vector<JobEnd> ends(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    try {
      // Created anew, never through a link someone left at the log's path.
      const int fd = create_run_file(jobs[i].log_path);
      running[i].pid = spawn(jobs[i].argv, fd);
      ::close(fd);
    } catch (...) {
      // The jobs already started must not outlive the sweep that gives up.
      for (std::size_t k = 0; k < i; ++k) {
        ::kill(-running[k].pid, SIGTERM);
        ::waitpid(running[k].pid, nullptr, 0);
      }
      throw;
    }
    running[i].start = Clock::now();
    if (on_start) on_start(i);
  }
  const auto timeout = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  std::size_t left = jobs.size();
  while (left > 0) {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      Running& r = running[i];
      if (r.done) continue;
      int status = 0;
      const pid_t got = ::waitpid(r.pid, &status, WNOHANG);
      const auto now = Clock::now();
      if (got == r.pid) {
        r.done = true;
        --left;
        // The group may hold more than srun (a helper it started): nothing of the job outlives it.
        ::kill(-r.pid, SIGKILL);
        ends[i].exit_code = r.terminated ? -1 : exit_code_of(status);
        ends[i].timed_out = r.terminated && !g_interrupted;
        ends[i].seconds = std::chrono::duration<double>(now - r.start).count();
        if (on_end) on_end(i, ends[i]);
        continue;
      }
      if (!r.terminated && (now - r.start > timeout || g_interrupted)) {
        ::kill(-r.pid, SIGTERM);
        r.terminated = true;
        r.term_sent = now;
      } else if (r.terminated && !r.killed && now - r.term_sent > kGrace) {
        ::kill(-r.pid, SIGKILL);
        r.killed = true;
      }
    }
    if (left > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (g_interrupted) throw std::runtime_error("interrupted: every running pair job was ended");
  return ends;
}

}  // namespace gpudirect::launcher
