// A raw TCP client of the rendezvous server, for tests that play a peer the store's own client
// would never be: connects (retrying until the server listens), writes bytes, reads frames, and
// can answer the server's challenge with any key (rendezvous_auth.hpp).
#pragma once

#include <catch2/catch.hpp>

#include "bootstrap/rendezvous_auth.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

namespace gpudirect::bootstrap::testing {

inline std::string u32(std::uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
inline std::string request(char op, const std::string& key, const std::string& value) {
  return u32(static_cast<std::uint32_t>(5 + key.size() + value.size())) + op + u32(static_cast<std::uint32_t>(key.size())) + key + value;
}
// The client's answer to a challenge: 'P', its nonce, its proof.
inline std::string proof_frame(const std::string& client_nonce, const std::string& proof) {
  return u32(static_cast<std::uint32_t>(1 + client_nonce.size() + proof.size())) + 'P' + client_nonce + proof;
}

class RawClient {
 public:
  explicit RawClient(int port) {
    using namespace std::chrono_literals;
    for (int attempt = 0; attempt < 200 && fd_ < 0; ++attempt) {
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_port = htons(static_cast<std::uint16_t>(port));
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0)
        fd_ = fd;
      else {
        ::close(fd);
        std::this_thread::sleep_for(10ms);
      }
    }
    REQUIRE(fd_ >= 0);
  }
  ~RawClient() { ::close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  // "127.0.0.1:PORT": this end of the connection, as the server names it.
  std::string address() const {
    sockaddr_in address{};
    socklen_t size = sizeof address;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size);
    return "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  }
  void write(const std::string& bytes) { CHECK(try_write(bytes)); }
  // For a peer the server may already have dropped.
  bool try_write(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }
  // Exactly `size` bytes, or what came before the server closed or `wait` passed.
  std::string read(std::size_t size, std::chrono::milliseconds wait) {
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (out.size() < size && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char buffer[4096];
      const ssize_t n = ::recv(fd_, buffer, std::min(sizeof buffer, size - out.size()), 0);
      if (n <= 0) break;
      out.append(buffer, static_cast<std::size_t>(n));
    }
    return out;
  }
  // One frame's body (status byte first), or "" when none came whole within `wait`.
  std::string read_frame(std::chrono::milliseconds wait = std::chrono::milliseconds(2000)) {
    const std::string header = read(4, wait);
    if (header.size() < 4) return "";
    std::uint32_t size = 0;
    std::memcpy(&size, header.data(), 4);
    const std::string body = read(size, wait);
    return body.size() == size ? body : "";
  }
  // The server's challenge nonce (the first frame must be '?' and a nonce).
  std::string challenge() {
    const std::string frame = read_frame();
    REQUIRE(frame.size() == 1 + kNonceSize);
    REQUIRE(frame[0] == '?');
    return frame.substr(1);
  }
  // Answers the challenge as a rank holding `key` would; true if the server accepted and proved
  // the same key back.
  bool prove(const std::string& key) {
    const std::string frame = read_frame();
    if (frame.size() != 1 + kNonceSize || frame[0] != '?') return false;
    const std::string server_nonce = frame.substr(1), client_nonce = random_nonce();
    write(proof_frame(client_nonce, client_proof(key, server_nonce, client_nonce)));
    const std::string answer = read_frame();
    return !answer.empty() && answer[0] == '+' && same_proof(server_proof(key, server_nonce, client_nonce), answer.substr(1));
  }
  // Everything the server sends until it closes the connection or `wait` passes.
  std::string read_all(std::chrono::milliseconds wait) { return read(1 << 30, wait); }

 private:
  int fd_ = -1;
};

}  // namespace gpudirect::bootstrap::testing
