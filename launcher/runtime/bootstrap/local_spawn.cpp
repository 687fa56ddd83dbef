#include "bootstrap/local_spawn.hpp"

#include "gpudirect/rendezvous_secret.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gpudirect::bootstrap {
namespace {

volatile sig_atomic_t interrupted = 0;
void on_signal(int) { interrupted = 1; }

}  // namespace

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot find a free local port for the rendezvous");
  }
  const int port = ntohs(address.sin_port);
  ::close(fd);
  return port;
}

namespace {

struct Rank {
  pid_t pid = -1;
  int out = -1, err = -1;
  std::string out_buffer, err_buffer;
  bool done = false;
  int status = 0;
};

// Emits complete lines with the rank prefix; `flush` also emits a last partial line.
void emit(std::string& buffer, int rank, FILE* stream, bool flush) {
  std::size_t newline;
  while ((newline = buffer.find('\n')) != std::string::npos) {
    std::fprintf(stream, "[%d] %.*s\n", rank, static_cast<int>(newline), buffer.data());
    buffer.erase(0, newline + 1);
  }
  if (flush && !buffer.empty()) {
    std::fprintf(stream, "[%d] %s\n", rank, buffer.c_str());
    buffer.clear();
  }
  std::fflush(stream);
}

}  // namespace

int spawn_local_ranks(int ranks, const std::vector<std::string>& argv) {
  if (ranks < 1 || ranks > 1024) throw std::invalid_argument("--np must be between 1 and 1024");
  const std::string port = std::to_string(free_local_port());
  // This run's own rendezvous secret: the ranks prove it to rank 0; no one else has it.
  const std::string secret = new_rendezvous_secret();
  std::vector<Rank> children(static_cast<std::size_t>(ranks));
  struct sigaction action {};
  action.sa_handler = on_signal;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);

  for (int r = 0; r < ranks; ++r) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      ::dup2(out[1], STDOUT_FILENO);
      ::dup2(err[1], STDERR_FILENO);
      ::setenv("GPUDIRECT_LAUNCH_RANK", std::to_string(r).c_str(), 1);
      ::setenv("GPUDIRECT_LAUNCH_SIZE", std::to_string(ranks).c_str(), 1);
      ::setenv("GPUDIRECT_LAUNCH_PORT", port.c_str(), 1);
      ::setenv(kRendezvousSecretVariable, secret.c_str(), 1);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv("/proc/self/exe", args.data());
      std::fprintf(stderr, "gpudirect-launch: cannot start rank %d: %s\n", r, std::strerror(errno));
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    children[static_cast<std::size_t>(r)] = Rank{pid, out[0], err[0], "", "", false, 0};
  }

  int first_failure = 0;
  int candidate_rank = -1, candidate_code = 0;  // the failure that will be reported, once decided
  std::chrono::steady_clock::time_point candidate_since{};
  int remaining = ranks;
  std::chrono::steady_clock::time_point kill_at{};
  bool terminated = false, killed = false;
  while (remaining > 0) {
    std::vector<pollfd> fds;
    std::vector<std::pair<int, bool>> owners;  // rank, is stderr
    for (int r = 0; r < ranks; ++r) {
      Rank& c = children[static_cast<std::size_t>(r)];
      if (c.out >= 0) {
        fds.push_back({c.out, POLLIN, 0});
        owners.emplace_back(r, false);
      }
      if (c.err >= 0) {
        fds.push_back({c.err, POLLIN, 0});
        owners.emplace_back(r, true);
      }
    }
    if (!fds.empty())
      ::poll(fds.data(), fds.size(), 50);
    else
      ::usleep(20000);
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Rank& c = children[static_cast<std::size_t>(owners[i].first)];
      char buffer[65536];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      std::string& text = owners[i].second ? c.err_buffer : c.out_buffer;
      FILE* stream = owners[i].second ? stderr : stdout;
      if (n > 0) {
        text.append(buffer, static_cast<std::size_t>(n));
        emit(text, owners[i].first, stream, false);
      } else {
        emit(text, owners[i].first, stream, true);
        ::close(fds[i].fd);
        (owners[i].second ? c.err : c.out) = -1;
      }
    }
    // Ranks that ended since the last pass. When several failed together, a rank killed by a
    // signal is the cause: the others exit because the rendezvous told them it died.
    int failed_rank = -1, failed_code = 0;
    bool failed_by_signal = false;
    for (int r = 0; r < ranks; ++r) {
      Rank& c = children[static_cast<std::size_t>(r)];
      if (c.done || c.out >= 0 || c.err >= 0) continue;
      int status = 0;
      if (::waitpid(c.pid, &status, 0) == c.pid) {
        c.done = true;
        --remaining;
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (code != 0 && (failed_rank < 0 || (WIFSIGNALED(status) && !failed_by_signal))) {
          failed_rank = r;
          failed_code = code;
          failed_by_signal = WIFSIGNALED(status);
        }
      }
    }
    // A rank killed by a signal is the cause; the others exit because the rendezvous told them it
    // died, and can do so before the killed one has finished exiting (the kernel closes its sockets
    // before it tears down its memory). So look at every unreaped rank's state without reaping it,
    // and give a failure without a signal a short grace before it is taken as the cause.
    for (int r = 0; !failed_by_signal && first_failure == 0 && r < ranks; ++r) {
      const Rank& c = children[static_cast<std::size_t>(r)];
      siginfo_t info{};
      if (c.done || ::waitid(P_PID, static_cast<id_t>(c.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != c.pid) continue;
      if (info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED) {
        failed_rank = r;
        failed_code = 128 + info.si_status;
        failed_by_signal = true;
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (first_failure == 0 && failed_rank >= 0 && (failed_by_signal || candidate_rank < 0)) {
      if (candidate_rank < 0) candidate_since = now;
      candidate_rank = failed_rank;
      candidate_code = failed_code;
    }
    if (first_failure == 0 && candidate_rank >= 0 &&
        (failed_by_signal || remaining == 0 || now - candidate_since >= std::chrono::milliseconds(250))) {
      first_failure = candidate_code;
      // The others learn of it through the rendezvous and stop by themselves; a short grace
      // lets them print why, then whatever is left is stopped.
      kill_at = now + std::chrono::milliseconds(1300);
      std::fprintf(stderr, "gpudirect-launch: rank %d exited with code %d\n", candidate_rank, candidate_code);
    }
    const bool failing = first_failure != 0 || interrupted;
    if (failing && interrupted && kill_at == std::chrono::steady_clock::time_point{}) kill_at = std::chrono::steady_clock::now();
    if (failing && !terminated && std::chrono::steady_clock::now() >= kill_at) {
      for (auto& c : children)
        if (!c.done) ::kill(c.pid, SIGTERM);
      terminated = true;
      kill_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    } else if (terminated && !killed && std::chrono::steady_clock::now() >= kill_at) {
      for (auto& c : children)
        if (!c.done) ::kill(c.pid, SIGKILL);
      killed = true;
    }
  }
  if (interrupted && first_failure == 0) return 130;
  return first_failure;
}

}  // namespace gpudirect::bootstrap
