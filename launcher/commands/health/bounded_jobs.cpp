#include "health/bounded_jobs.hpp"

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

namespace gpudirect::launcher::health {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kGrace = std::chrono::seconds(5);  // srun's own cancel after SIGTERM, before SIGKILL

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

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

// fork + exec in a new process group; the child's stdout/stderr go to `output_fd`.
pid_t spawn(const std::vector<std::string>& argv, int output_fd) {
  auto args = c_argv(argv);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot fork for " + argv[0] + ": " + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(output_fd, STDOUT_FILENO);
    ::dup2(output_fd, STDERR_FILENO);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    ::execvp(args[0], args.data());
    const std::string message = "gpudirect health: cannot run " + argv[0] + ": " + std::strerror(errno) + " (is it on PATH?)\n";
    [[maybe_unused]] const auto written = ::write(STDERR_FILENO, message.data(), message.size());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: no window in which a signal to the group misses the child
  return pid;
}

int exit_code_of(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

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
      const int fd = ::open(jobs[i].log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0)
        throw std::runtime_error("cannot write the job log " + jobs[i].log_path + ": " + std::strerror(errno) + " (check --work-dir)");
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

std::pair<int, std::string> run_capture(const std::vector<std::string>& argv, double timeout_s) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  pid_t pid = -1;
  try {
    pid = spawn(argv, fds[1]);
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  std::string output;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  char buffer[4096];
  bool timed_out = false;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      ::kill(-pid, SIGKILL);
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000))) < 0 && errno != EINTR) break;
    if (!(p.revents & (POLLIN | POLLHUP))) continue;
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    output.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (timed_out) output += "\n(" + argv[0] + " did not finish within " + std::to_string(static_cast<int>(timeout_s)) + " s and was killed)";
  return {exit_code_of(status), output};
}

}  // namespace gpudirect::launcher::health
