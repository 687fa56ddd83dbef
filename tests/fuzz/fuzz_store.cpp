// Rank 0's rendezvous server (launcher/runtime/bootstrap/tcp_store.cpp) under hostile clients, over
// real sockets: each input starts a real store (rank 0 of 1, serving from its thread), replays the
// input as the byte streams of up to three raw TCP clients, closes their write sides, and reads
// every client until the server closes it. Then the honest rank does a set and a get.
// Each client first reads the server's challenge. Unless its first record says otherwise it then
// proves the step's secret, as a rank does, so its bytes reach the request parser (a rank gone
// wrong); a client that does not prove it fuzzes the handshake: its bytes, or an answer of the
// right shape made of them, must be refused before any request is served.
// Failures: a crash or sanitizer report; a client the server never closes (a hang, 5 s); the honest
// rank refused or timed out (anything but a PeerFailure, which is the defined outcome when a
// hostile client said hello as rank 0 and then aborted or left); a file descriptor left open.
//
// Input: records of [control][length][length bytes]. control bits 0-1: the client (0, 1, 2; 3 is 2);
// bit 2: the bytes are a request body [op][key length][key][value] that gets a correct frame header
// (so the fuzzer reaches every operation), otherwise the bytes go out as they are (so it can also
// forge lengths); bit 3: close the client's write side after this record. On a client's first
// record only: bit 4: the client never proves the secret (a stranger); bit 5 with bit 4: it answers
// the challenge with a frame of the right size and op whose nonce and proof are these bytes.
#include "fuzz_input.hpp"

#include "bootstrap/rendezvous_auth.hpp"
#include "bootstrap/store.hpp"
#include "gpudirect/rendezvous_secret.hpp"

#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kClients = 3;
const std::string kSecret = "00112233445566778899aabbccddeeff0123456789abcdef0011223344556677";

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

// A refused or interrupted connect is tried again for up to a second: once in a CI run (6 s of
// fuzzing on a loaded machine) a connect to the store just started was refused, and the same input
// replayed cleanly every time after; the error names errno if it persists.
int connect_to(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int error = 0;
  for (int attempt = 0; attempt < 20; ++attempt) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) throw std::runtime_error(std::string("fuzz_store: socket: ") + std::strerror(errno));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) return fd;
    error = errno;
    ::close(fd);
    if (error != ECONNREFUSED && error != EINTR && error != EAGAIN && error != ETIMEDOUT) break;
    std::this_thread::sleep_for(50ms);
  }
  throw std::runtime_error("fuzz_store: cannot connect to the store it started on port " + std::to_string(port) + ": " +
                           std::strerror(error));
}

std::string u32(std::uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }

// The server's challenge nonce: the first frame on every connection.
std::string read_challenge(int fd) {
  std::string frame;
  const auto deadline = Clock::now() + 2s;
  while (frame.size() < 4 + 1 + gpudirect::bootstrap::kNonceSize && Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char buffer[64];
    const ssize_t n = ::recv(fd, buffer, 4 + 1 + gpudirect::bootstrap::kNonceSize - frame.size(), 0);
    if (n <= 0) break;
    frame.append(buffer, static_cast<std::size_t>(n));
  }
  if (frame.size() != 4 + 1 + gpudirect::bootstrap::kNonceSize || frame[4] != '?')
    throw std::runtime_error("fuzz_store: no challenge from the server");
  return frame.substr(5);
}

// The answer to the challenge: 'P', a nonce, a proof (kNonceSize + kProofSize bytes).
std::string answer(const std::string& nonce_and_proof) {
  return u32(static_cast<std::uint32_t>(1 + nonce_and_proof.size())) + 'P' + nonce_and_proof;
}

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
bool drain_until_closed(const std::array<int, kClients>& fds, Clock::time_point deadline, std::array<std::string, kClients>& received) {
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
      const ssize_t n = ::recv(fds[i], buffer, sizeof buffer, 0);
      if (n <= 0) {
        open[i] = false;
        --left;
      } else if (received[i].size() < 1024) {
        received[i].append(buffer, static_cast<std::size_t>(n));
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
    context.rendezvous_secret = kSecret;
    auto store = connect_store(context, 2s);

    std::array<int, kClients> fds{};
    std::array<bool, kClients> writing{true, true, true}, started{false, false, false}, proved{false, false, false};
    std::array<std::string, kClients> nonces;
    for (int i = 0; i < kClients; ++i) {
      fds[i] = connect_to(context.rendezvous_port);
      nonces[i] = read_challenge(fds[i]);
    }
    const std::string key = gpudirect::decode_rendezvous_secret(kSecret);
    const std::size_t answer_size = gpudirect::bootstrap::kNonceSize + gpudirect::bootstrap::kProofSize;
    for (std::size_t at = 0; at + 2 <= size;) {
      const std::uint8_t control = data[at];
      const std::size_t length = std::min<std::size_t>(data[at + 1], size - at - 2);
      const std::string bytes(reinterpret_cast<const char*>(data + at + 2), length);
      at += 2 + length;
      const int client = std::min(control & 3, kClients - 1);
      if (!writing[client]) continue;
      if (!started[client]) {
        started[client] = true;
        if (!(control & 16)) {
          proved[client] = true;
          const std::string client_nonce(gpudirect::bootstrap::kNonceSize, static_cast<char>(client));
          send_all(fds[client], answer(client_nonce + gpudirect::bootstrap::client_proof(key, nonces[client], client_nonce)));
        } else if (control & 32) {
          send_all(fds[client], answer((bytes + std::string(answer_size, '\0')).substr(0, answer_size)));
          continue;
        }
      }
      send_all(fds[client], (control & 4) ? framed(bytes) : bytes);
      if (control & 8) {
        ::shutdown(fds[client], SHUT_WR);
        writing[client] = false;
      }
    }
    for (int i = 0; i < kClients; ++i)
      if (writing[i]) ::shutdown(fds[i], SHUT_WR);
    std::array<std::string, kClients> received;
    const bool closed = drain_until_closed(fds, Clock::now() + 5s, received);
    for (const int fd : fds) ::close(fd);
    if (!closed) fail("the server kept a client open after it closed its side (5 s)");
    // A client that never proved the secret gets nothing after the challenge but one refusal.
    for (int i = 0; i < kClients; ++i) {
      if (proved[i] || received[i].empty()) continue;
      std::uint32_t frame_size = 0;
      if (received[i].size() >= 5) std::memcpy(&frame_size, received[i].data(), 4);
      if (received[i].size() < 5 || frame_size != received[i].size() - 4 || received[i][4] != '-')
        fail("a client that never proved the secret got something other than one refusal");
    }

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
