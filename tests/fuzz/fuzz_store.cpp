// Rank 0's rendezvous server (launcher/runtime/bootstrap/tcp_store.cpp) under hostile clients, over
// real sockets: each input starts a real store (rank 0 of 1, serving from its thread), replays the
// input as the byte streams of up to three raw TCP clients, closes their write sides, and reads
// every client until the server closes it. Then the honest rank does a set and a get.
// Failures: a crash or sanitizer report; a client the server never closes (a hang, 5 s); the honest
// rank refused or timed out (anything but a PeerFailure, which is the defined outcome when a
// hostile client said hello as rank 0 and then aborted or left); a file descriptor left open.
//
// Input: records of [control][length][length bytes]. control bits 0-1: the client (0, 1, 2; 3 is 2);
// bit 2: the bytes are a request body [op][key length][key][value] that gets a correct frame header
// (so the fuzzer reaches every operation), otherwise the bytes go out as they are (so it can also
// forge lengths); bit 3: close the client's write side after this record.
#include "fuzz_input.hpp"

#include "bootstrap/store.hpp"

#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kClients = 3;

int free_port() {
  const int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_any;
  socklen_t size = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("fuzz_store: no free local port");
  }
  const int port = ntohs(address.sin6_port);
  ::close(fd);
  return port;
}

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("fuzz_store: cannot connect to the store it started");
  }
  return fd;
}

std::string u32(std::uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }

// The request body [op][key length][key][value] as the wire frame a well-behaved rank would send.
std::string framed(const std::string& body) {
  if (body.empty()) return u32(0);
  const char op = body[0];
  const std::size_t key_size = body.size() > 1 ? std::min<std::size_t>(static_cast<unsigned char>(body[1]), body.size() - 2) : 0;
  const std::string key = body.size() > 2 ? body.substr(2, key_size) : "";
  const std::string value = body.size() > 2 + key_size ? body.substr(2 + key_size) : "";
  return u32(static_cast<std::uint32_t>(5 + key.size() + value.size())) + op + u32(static_cast<std::uint32_t>(key.size())) + key + value;
}

void send_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;  // the server already dropped this client: a defined outcome
    done += static_cast<std::size_t>(n);
  }
}

// Reads every client until the server closes it; false if one is still open at the deadline.
bool drain_until_closed(const std::array<int, kClients>& fds, Clock::time_point deadline) {
  std::array<bool, kClients> open{true, true, true};
  int left = kClients;
  while (left > 0) {
    if (Clock::now() >= deadline) return false;
    std::array<pollfd, kClients> p{};
    for (int i = 0; i < kClients; ++i) p[i] = {open[i] ? fds[i] : -1, POLLIN, 0};
    if (::poll(p.data(), kClients, 50) <= 0) continue;
    for (int i = 0; i < kClients; ++i) {
      if (!open[i] || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buffer[65536];
      if (::recv(fds[i], buffer, sizeof buffer, 0) <= 0) {
        open[i] = false;
        --left;
      }
    }
  }
  return true;
}

int open_descriptors() {
  int count = 0;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    while (::readdir(dir)) ++count;
    ::closedir(dir);
  }
  return count;
}

void fail(const char* why) {
  std::fprintf(stderr, "fuzz_store: %s\n", why);
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpudirect::bootstrap;
  const int descriptors_before = open_descriptors();
  {
    LaunchContext context;
    context.rank = 0;
    context.size = 1;
    context.hostname = "fuzz-host";
    context.rendezvous_host = "127.0.0.1";
    context.rendezvous_port = free_port();
    auto store = connect_store(context, 2s);

    std::array<int, kClients> fds{};
    std::array<bool, kClients> writing{true, true, true};
    for (int& fd : fds) fd = connect_to(context.rendezvous_port);
    for (std::size_t at = 0; at + 2 <= size;) {
      const std::uint8_t control = data[at];
      const std::size_t length = std::min<std::size_t>(data[at + 1], size - at - 2);
      const std::string bytes(reinterpret_cast<const char*>(data + at + 2), length);
      at += 2 + length;
      const int client = std::min(control & 3, kClients - 1);
      if (!writing[client]) continue;
      send_all(fds[client], (control & 4) ? framed(bytes) : bytes);
      if (control & 8) {
        ::shutdown(fds[client], SHUT_WR);
        writing[client] = false;
      }
    }
    for (int i = 0; i < kClients; ++i)
      if (writing[i]) ::shutdown(fds[i], SHUT_WR);
    const bool closed = drain_until_closed(fds, Clock::now() + 5s);
    for (const int fd : fds) ::close(fd);
    if (!closed) fail("the server kept a client open after it closed its side (5 s)");

    try {
      store->set("fuzz/honest", "value");
      if (store->get("fuzz/honest") != "value") fail("the honest rank read back another value");
    } catch (const PeerFailure&) {
      // A hostile client said hello as rank 0 and aborted or left: every rank is told. Defined.
    } catch (const StoreError& error) {
      std::fprintf(stderr, "fuzz_store: the honest rank failed: %s\n", error.what());
      fail("the server stopped serving the honest rank");
    }
  }
  if (open_descriptors() != descriptors_before) fail("a file descriptor stayed open after the store was gone");
  return 0;
}
