// The rendezvous store over TCP: rank 0 serves from a thread (one poll loop, non-blocking sockets),
// every rank is a client with two connections: one for requests, one that stays open as the
// liveness channel (see store.hpp for the contracts).
// Handshake, on every connection before anything else (rendezvous_auth.hpp): the server sends
// u32 length, '?', its nonce; the client answers u32 length, 'P', its nonce, its proof; the server
// answers '+' and its own proof, or '-' and closes. A peer that has not proved the secret is served
// nothing else: no key, no rank, no host name.
// Request: u32 length, op byte, u32 key length, key, value. Reply: u32 length, status byte
// ('+' ok, '-' the request was rejected, '!' the job was aborted), payload.
#include "bootstrap/rendezvous_auth.hpp"
#include "bootstrap/store.hpp"

#include "gpudirect/rendezvous_secret.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace gpudirect::bootstrap {
namespace {

using Clock = std::chrono::steady_clock;
enum Op : char { kSet = 'S', kGet = 'G', kTryGet = 'T', kAdd = 'A', kHello = 'H', kBye = 'B', kAbort = 'X', kProof = 'P' };
enum Status : char { kOk = '+', kRejected = '-', kAborted = '!', kChallenge = '?' };
constexpr std::uint32_t kProofFrame = 1 + kNonceSize + kProofSize;  // 'P', client nonce, proof
// A peer that connects and says nothing is dropped after this (or the store's timeout, if shorter).
constexpr std::chrono::seconds kHandshakeLimit{10};

// Bounds on what one peer may make rank 0 hold: a frame, and replies it has not read yet.
constexpr std::uint32_t kMaxFrame = 64u << 20;
constexpr std::size_t kMaxBacklog = 256u << 20;

std::string frame(char first, const std::string& rest) {
  const auto size = static_cast<std::uint32_t>(1 + rest.size());
  return std::string(reinterpret_cast<const char*>(&size), 4) + first + rest;
}

std::string encode(char op, const std::string& key, const std::string& value) {
  const auto key_size = static_cast<std::uint32_t>(key.size());
  return frame(op, std::string(reinterpret_cast<const char*>(&key_size), 4) + key + value);
}

// Strict decimal integer: the whole text, nothing else.
bool parse_integer(const std::string& text, long long& out) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end && !text.empty();
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

// Writes all of `data` on a blocking socket or throws; `what` names the peer for the message.
void write_all(int fd, const std::string& data, const std::string& what) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw StoreError("lost the connection to " + what + ": " + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

// Reads exactly `size` bytes before `deadline`, polling in short slices so that `stop()` (an
// abort, a shutdown) ends the wait early. false on timeout or when stop() said so; throws on EOF.
template <typename Stop>
bool read_exact(int fd, char* out, std::size_t size, Clock::time_point deadline, const std::string& what, Stop stop) {
  std::size_t done = 0;
  while (done < size) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, std::min(remaining_ms(deadline), 50));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      if (Clock::now() >= deadline || stop()) return false;
      continue;
    }
    const ssize_t n = ::recv(fd, out + done, size - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw StoreError("lost the connection to " + what);
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// "10.0.0.5:41234" or "[fe80::1]:41234": who connected, for the line that names a refused peer.
std::string peer_address(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (address.ss_family == AF_INET6) {
    const auto& a6 = reinterpret_cast<const sockaddr_in6&>(address);
    port = ntohs(a6.sin6_port);
    if (IN6_IS_ADDR_V4MAPPED(&a6.sin6_addr)) {
      ::inet_ntop(AF_INET, a6.sin6_addr.s6_addr + 12, text, sizeof text);
      return std::string(text) + ":" + std::to_string(port);
    }
    ::inet_ntop(AF_INET6, &a6.sin6_addr, text, sizeof text);
    return "[" + std::string(text) + "]:" + std::to_string(port);
  }
  if (address.ss_family == AF_INET) {
    const auto& a4 = reinterpret_cast<const sockaddr_in&>(address);
    ::inet_ntop(AF_INET, &a4.sin_addr, text, sizeof text);
    port = ntohs(a4.sin_port);
  }
  return std::string(text) + ":" + std::to_string(port);
}

// One stderr line per refused peer, at most kLines a minute, so a flood of connections cannot fill
// rank 0's log; the lines held back are counted in the next line that gets through (or at the end).
class RefusalLog {
 public:
  void refused(const std::string& peer, const std::string& why) {
    const auto now = Clock::now();
    if (now - window_start_ >= std::chrono::minutes(1)) {
      report_held_back();
      window_start_ = now;
      shown_ = 0;
    }
    if (shown_ >= kLines) {
      ++held_back_;
      return;
    }
    ++shown_;
    std::fprintf(stderr,
                 "gpudirect-launch: rendezvous: refused a connection from %s: %s (not a rank of this step, or one with another "
                 "GPUDIRECT_RENDEZVOUS_SECRET)\n",
                 peer.c_str(), why.c_str());
  }
  ~RefusalLog() { report_held_back(); }

 private:
  static constexpr int kLines = 10;
  void report_held_back() {
    if (held_back_ > 0)
      std::fprintf(stderr, "gpudirect-launch: rendezvous: refused %ld more connections without naming them (at most %d lines a minute)\n",
                   held_back_, kLines);
    held_back_ = 0;
  }
  Clock::time_point window_start_{};
  int shown_ = 0;
  long held_back_ = 0;
};

class Server {
 public:
  Server(int port, int ranks, std::string host, std::string key, std::chrono::milliseconds handshake_limit)
      : ranks_(ranks), host_(std::move(host)), key_(std::move(key)), handshake_limit_(handshake_limit) {
    listen_fd_ = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) throw StoreError(std::string("cannot create the rendezvous socket: ") + std::strerror(errno));
    const int on = 1, off = 0;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    ::setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    sockaddr_in6 address{};
    address.sin6_family = AF_INET6;
    address.sin6_addr = in6addr_any;
    address.sin6_port = htons(static_cast<std::uint16_t>(port));
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(listen_fd_, 1024) != 0) {
      const std::string why = std::strerror(errno);
      ::close(listen_fd_);
      throw StoreError("rank 0 cannot listen on port " + std::to_string(port) + ": " + why +
                       " (another job on the port? pass --rendezvous HOST:PORT)");
    }
    thread_ = std::thread([this] { loop(); });
  }

  ~Server() {
    stop_ = true;
    thread_.join();
    for (auto& [fd, client] : clients_) ::close(fd);
    ::close(listen_fd_);
  }

  // Until every rank has said goodbye, the job was aborted, or the deadline.
  void wait_for_ranks(Clock::time_point deadline) {
    while (Clock::now() < deadline && finished_ < ranks_ && !aborted_) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }

 private:
  struct Client {
    std::string in, out;
    int rank = -1;  // set by hello: this is a rank's liveness connection
    std::string host;
    bool bye = false;
    bool proved = false;           // it proved the secret: from then on, a client like any other
    std::string nonce;             // the challenge it was sent
    std::string peer;              // its address, for the refusal line
    Clock::time_point prove_by{};  // dropped if it has not proved the secret by then
  };

  void loop() {
    while (!stop_) {
      std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
      for (auto& [fd, client] : clients_) fds.push_back({fd, static_cast<short>(POLLIN | (client.out.empty() ? 0 : POLLOUT)), 0});
      if (::poll(fds.data(), fds.size(), 20) > 0) {
        if (fds[0].revents & POLLIN) accept_client();
        for (std::size_t i = 1; i < fds.size(); ++i) {
          const int fd = fds[i].fd;
          if (!clients_.count(fd) || doomed_.count(fd)) continue;
          if (fds[i].revents & POLLOUT) flush(fd);
          if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) serve(fd);
        }
      }
      // Peers that connected and never proved the secret give their place back.
      const auto now = Clock::now();
      for (auto& [fd, client] : clients_)
        if (!client.proved && now >= client.prove_by && !doomed_.count(fd))
          refuse(fd, "no answer to the challenge within " + std::to_string(handshake_limit_.count()) + " ms");
      // Dropping a rank publishes an abort, which may doom more clients that cannot take it.
      while (!doomed_.empty()) {
        const auto [fd, why] = *doomed_.begin();
        doomed_.erase(doomed_.begin());
        drop(fd, why);
      }
    }
  }

  // Every new connection gets a fresh challenge and nothing else until it answers it.
  void accept_client() {
    sockaddr_storage address{};
    socklen_t size = sizeof address;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&address), &size, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    const int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    Client& client = clients_[fd];
    client.peer = peer_address(address);
    client.prove_by = Clock::now() + handshake_limit_;
    try {
      client.nonce = random_nonce();
    } catch (const std::exception& e) {
      refusals_.refused(client.peer, e.what());
      ::close(fd);
      clients_.erase(fd);
      return;
    }
    send_frame(fd, kChallenge, client.nonce);
  }

  // A peer that did not prove the secret: named in one line, told only that, and dropped.
  void refuse(int fd, const std::string& why) {
    refusals_.refused(clients_[fd].peer, why);
    send_frame(fd, kRejected,
               "gpudirect rendezvous: refused: this connection did not prove the step's secret (GPUDIRECT_RENDEZVOUS_SECRET)");
    doom(fd, "");
  }

  // The client's answer to the challenge, in `in` from its start: a frame of exactly kProofFrame
  // bytes. Returns false while it is incomplete; refuses the peer on anything else.
  bool check_proof(int fd) {
    Client& client = clients_[fd];
    std::uint32_t size = 0;
    std::memcpy(&size, client.in.data(), 4);
    if (size != kProofFrame || (client.in.size() > 4 && client.in[4] != kProof)) {
      refuse(fd, "it sent something other than an answer to the challenge");
      return false;
    }
    if (client.in.size() < 4 + kProofFrame) return false;
    const std::string client_nonce = client.in.substr(5, kNonceSize);
    const std::string given = client.in.substr(5 + kNonceSize, kProofSize);
    client.in.erase(0, 4 + kProofFrame);
    if (!same_proof(client_proof(key_, client.nonce, client_nonce), given)) {
      refuse(fd, "a wrong answer to the challenge");
      return false;
    }
    client.proved = true;
    send_frame(fd, kOk, server_proof(key_, client.nonce, client_nonce));
    return true;
  }

  // Marks a client for closing at the end of this turn; `why` becomes the abort if it is a rank.
  void doom(int fd, const std::string& why) { doomed_.emplace(fd, why); }

  void drop(int fd, const std::string& why) {
    auto it = clients_.find(fd);
    if (it == clients_.end()) return;
    const Client client = std::move(it->second);
    ::close(fd);
    clients_.erase(it);
    std::erase_if(waiting_, [fd](const auto& w) { return w.second == fd; });
    if (client.rank >= 0 && !client.bye) {
      ++finished_;
      publish("rank " + std::to_string(client.rank) + " on " + client.host + " " + why);
    }
  }

  // Tells every rank (liveness connections and pending gets) that the job is over. First wins.
  void publish(const std::string& message) {
    if (aborted_) return;
    abort_message_ = message;
    aborted_ = true;
    for (auto& [fd, client] : clients_)
      if (client.rank >= 0 && !client.bye) send_frame(fd, kAborted, message);
    for (const auto& [key, fd] : waiting_) send_frame(fd, kAborted, message);
    waiting_.clear();
  }

  void send_frame(int fd, char status, const std::string& payload) {
    if (doomed_.count(fd)) return;
    clients_[fd].out += frame(status, payload);
    flush(fd);
  }

  void flush(int fd) {
    std::string& out = clients_[fd].out;
    while (!out.empty()) {
      const ssize_t n = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n <= 0) {
        doom(fd, "lost its connection to the rendezvous (" + std::string(std::strerror(errno)) + ")");
        return;
      }
      out.erase(0, static_cast<std::size_t>(n));
    }
    if (out.size() > kMaxBacklog) doom(fd, "stopped reading from the rendezvous (over 256 MiB of replies unread)");
  }

  // A protocol violation: say why to the client (it may not listen), then drop it.
  void reject(int fd, const std::string& why) {
    send_frame(fd, kRejected, "gpudirect rendezvous: " + why);
    doom(fd, "sent a malformed message to the rendezvous: " + why);
  }

  void serve(int fd) {
    char buffer[65536];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) {
      if (!clients_[fd].proved) return refuse(fd, "it closed the connection without answering the challenge");
      doom(fd,
           "is gone: its connection to the rendezvous closed without a goodbye (killed, crashed, or exited on an error; see its output)");
      return;
    }
    std::string& in = clients_[fd].in;
    in.append(buffer, static_cast<std::size_t>(n));
    while (in.size() >= 4 && !doomed_.count(fd)) {
      if (!clients_[fd].proved) {
        if (!check_proof(fd)) return;
        continue;
      }
      std::uint32_t size = 0;
      std::memcpy(&size, in.data(), 4);
      if (size > kMaxFrame)
        return reject(fd, "a frame of " + std::to_string(size) + " bytes is over the limit of " + std::to_string(kMaxFrame) + " bytes");
      if (size < 5) return reject(fd, "a frame of " + std::to_string(size) + " bytes is too short for a request (op and key length)");
      if (in.size() < 4 + static_cast<std::size_t>(size)) break;
      std::uint32_t key_size = 0;
      std::memcpy(&key_size, in.data() + 5, 4);
      if (key_size > size - 5)
        return reject(fd, "a key of " + std::to_string(key_size) + " bytes runs past its frame of " + std::to_string(size) + " bytes");
      const char op = in[4];
      std::string key = in.substr(9, key_size);
      std::string value = in.substr(9 + key_size, size - 5 - key_size);
      in.erase(0, 4 + static_cast<std::size_t>(size));
      try {
        handle(fd, op, key, value);
      } catch (const std::exception& e) {
        return reject(fd, std::string("cannot serve the request: ") + e.what());
      }
    }
  }

  void handle(int fd, char op, const std::string& key, const std::string& value) {
    Client& client = clients_[fd];
    switch (op) {
      case kSet: {
        data_[key] = value;
        send_frame(fd, kOk, "");
        std::vector<int> woken;
        std::erase_if(waiting_, [&](const auto& w) { return w.first == key && (woken.push_back(w.second), true); });
        for (const int waiter : woken) send_frame(waiter, kOk, value);
        break;
      }
      case kGet:
        if (auto it = data_.find(key); it != data_.end())
          send_frame(fd, kOk, it->second);
        else if (aborted_)
          send_frame(fd, kAborted, abort_message_);
        else
          waiting_.emplace_back(key, fd);
        break;
      case kTryGet:
        if (auto it = data_.find(key); it != data_.end())
          send_frame(fd, kOk, "1" + it->second);
        else
          send_frame(fd, kOk, "0");
        break;
      case kAdd: {
        long long step = 0, current = 0;
        if (!parse_integer(value, step)) return reject(fd, "add to '" + key + "': '" + value + "' is not an integer");
        if (auto it = data_.find(key); it != data_.end() && !parse_integer(it->second, current))
          return reject(fd, "add to '" + key + "': the key holds a value that is not an integer");
        data_[key] = std::to_string(current + step);
        send_frame(fd, kOk, data_[key]);
        break;
      }
      case kHello: {
        long long rank = -1;
        if (!parse_integer(key, rank) || rank < 0 || rank >= ranks_)
          return reject(fd,
                        "hello from rank '" + key + "': expected 0.." + std::to_string(ranks_ - 1) + " (is another job using this port?)");
        client.rank = static_cast<int>(rank);
        client.host = value;
        data_["rank-hosts/" + key] = value;  // for messages about a rank that is late
        if (aborted_)
          send_frame(fd, kAborted, abort_message_);
        else
          send_frame(fd, kOk, host_);
        break;
      }
      case kBye:
        if (client.rank < 0) return reject(fd, "goodbye before hello");
        if (!client.bye) ++finished_;
        client.bye = true;
        break;
      case kAbort:
        if (client.rank < 0) return reject(fd, "abort before hello");
        publish(value);
        break;
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(static_cast<unsigned char>(op)));
        return reject(fd, std::string("unknown operation ") + hex + " (a client of another version, or not a gpudirect-launch rank)");
      }
    }
  }

  int listen_fd_ = -1;
  const int ranks_;
  const std::string host_;
  const std::string key_;  // the secret's bytes
  const std::chrono::milliseconds handshake_limit_;
  RefusalLog refusals_;
  std::atomic<bool> stop_{false};
  std::atomic<int> finished_{0};
  std::atomic<bool> aborted_{false};
  std::string abort_message_;
  std::map<int, Client> clients_;
  std::map<int, std::string> doomed_;
  std::map<std::string, std::string> data_;
  std::vector<std::pair<std::string, int>> waiting_;
  std::thread thread_;
};

class TcpStore final : public Store {
 public:
  TcpStore(const LaunchContext& context, std::chrono::milliseconds timeout)
      : context_(context), timeout_(timeout), signal_(std::make_shared<AbortSignal>()) {
    where_ = context.rendezvous_host + ":" + std::to_string(context.rendezvous_port);
    server_host_ = "host " + context.rendezvous_host;
    key_ = secret_key(context);
    if (context.rank == 0)
      server_ = std::make_unique<Server>(context.rendezvous_port, context.size, context.hostname, key_,
                                         std::min<std::chrono::milliseconds>(timeout, kHandshakeLimit));
    try {
      fd_ = connect_to_server();
      prove_secret(fd_);
      watch_fd_ = connect_to_server();
      prove_secret(watch_fd_);
      server_host_ = exchange(watch_fd_, encode(kHello, std::to_string(context.rank), context.hostname), "hello");
    } catch (...) {
      if (fd_ >= 0) ::close(fd_);
      if (watch_fd_ >= 0) ::close(watch_fd_);
      throw;
    }
    watcher_ = std::thread([this] { watch(); });
  }

  ~TcpStore() override {
    closing_ = true;
    // A rank leaving on an exception, or after an abort, says no goodbye: rank 0 then tells the
    // others it is gone instead of letting them wait for it.
    const bool clean = std::uncaught_exceptions() == 0 && !signal_->raised();
    if (clean) send_on_watch(encode(kBye, "", ""));
    ::shutdown(watch_fd_, SHUT_RDWR);
    watcher_.join();
    ::close(watch_fd_);
    ::close(fd_);
    // Rank 0 keeps serving until the others have left, so nobody loses the store mid-call.
    if (server_ && clean) server_->wait_for_ranks(Clock::now() + timeout_);
  }

  void set(const std::string& key, const std::string& value) override { call(kSet, key, value, "set " + key); }

  std::string get(const std::string& key) override { return call(kGet, key, "", "the key '" + key + "'"); }

  void barrier(const std::string& name) override {
    const std::string base = "barrier/" + name + "/" + std::to_string(generation(name, 'b'));
    const long long arrived = std::stoll(call(kAdd, base + "/count", "1", "barrier " + name));
    if (arrived == context_.size) call(kSet, base + "/done", "", "barrier " + name);
    try {
      call(kGet, base + "/done", "", "barrier " + name);
    } catch (const PeerFailure&) {
      throw;
    } catch (const StoreError&) {
      const std::string now = call(kTryGet, base + "/count", "", "barrier " + name);
      throw StoreError("barrier '" + name + "': only " + now.substr(1) + " of " + std::to_string(context_.size) + " ranks arrived within " +
                       seconds() + " (rank " + std::to_string(context_.rank) +
                       "): a rank failed, is stuck, or never started; check the other ranks' output");
    }
  }

  std::vector<std::string> all_gather(const std::string& name, const std::string& value) override {
    const std::string base = "gather/" + name + "/" + std::to_string(generation(name, 'g')) + "/";
    set(base + std::to_string(context_.rank), value);
    std::vector<std::string> out;
    for (int r = 0; r < context_.size; ++r) {
      try {
        out.push_back(get(base + std::to_string(r)));
      } catch (const PeerFailure&) {
        throw;
      } catch (const StoreError&) {
        const std::string host = call(kTryGet, "rank-hosts/" + std::to_string(r), "", "the host of rank " + std::to_string(r));
        throw StoreError("all_gather '" + name + "': rank " + std::to_string(r) + " of " + std::to_string(context_.size) +
                         (host[0] == '1' ? " on " + host.substr(1) + " did not contribute within " + seconds() +
                                               ": it failed, is stuck, or runs another command"
                                         : " never reached the rendezvous within " + seconds() +
                                               ": it did not start, or started late or elsewhere (check its output and --rendezvous)"));
      }
    }
    return out;
  }

  void abort(const std::string& reason) override {
    signal_->raise(reason);
    send_on_watch(encode(kAbort, "", reason));
  }

  std::shared_ptr<AbortSignal> abort_signal() override { return signal_; }

 private:
  // The secret's bytes, or a StoreError that says how to give the ranks one.
  static std::string secret_key(const LaunchContext& context) {
    const std::string who = " (rank " + std::to_string(context.rank) + " of " + std::to_string(context.size) +
                            (context.origin.empty() ? "" : ", " + context.origin) + ")";
    if (context.rendezvous_secret.empty())
      throw StoreError(std::string("no ") + kRendezvousSecretVariable + ": the rendezvous admits only ranks that prove the step's secret" +
                       who + "; the gpudirect plugin sets one for every srun; without it (or under torchrun) run `export " +
                       kRendezvousSecretVariable + "=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \\n')` before srun, or install the plugin");
    try {
      return decode_rendezvous_secret(context.rendezvous_secret);
    } catch (const std::invalid_argument& e) {
      throw StoreError(e.what() + who);
    }
  }

  // One frame from the rendezvous on `fd` before `deadline` (the handshake's).
  std::string read_frame(int fd, Clock::time_point deadline, const std::string& what) {
    const auto stop = [this] { return signal_->raised(); };
    std::uint32_t size = 0;
    if (!read_exact(fd, reinterpret_cast<char*>(&size), 4, deadline, where_, stop))
      throw StoreError("timed out after " + seconds() + " waiting for " + what + " from " + where_ + " (rank " +
                       std::to_string(context_.rank) + ")");
    if (size == 0 || size > (1u << 16))
      throw StoreError("malformed " + what + " from " + where_ + ": is it a gpudirect-launch rendezvous?");
    std::string body(size, '\0');
    if (!read_exact(fd, body.data(), size, deadline, where_, stop)) throw StoreError("timed out reading " + what + " from " + where_);
    return body;
  }

  // The handshake's client side: prove the secret to rank 0, and make rank 0 prove it back.
  void prove_secret(int fd) {
    const auto deadline = Clock::now() + timeout_;
    const std::string rank = " (rank " + std::to_string(context_.rank) + ")";
    const std::string impostor =
        "the process at " + where_ +
        " did not prove the step's secret: it is not this step's rank 0 (another program on the port?), or rank 0 has "
        "another GPUDIRECT_RENDEZVOUS_SECRET" +
        rank;
    const std::string challenge = read_frame(fd, deadline, "the rendezvous' challenge");
    if (challenge.size() != 1 + kNonceSize || challenge[0] != kChallenge) throw StoreError(impostor);
    const std::string server_nonce = challenge.substr(1), client_nonce = random_nonce();
    write_all(fd, frame(kProof, client_nonce + client_proof(key_, server_nonce, client_nonce)), "the rendezvous at " + where_);
    const std::string answer = read_frame(fd, deadline, "the rendezvous' answer to this rank's proof");
    if (answer[0] == kRejected) throw StoreError(answer.substr(1) + rank);
    if (answer[0] != kOk || !same_proof(server_proof(key_, server_nonce, client_nonce), answer.substr(1))) throw StoreError(impostor);
  }

  std::string seconds() const { return std::to_string(static_cast<double>(timeout_.count()) / 1000.0).substr(0, 4) + " s"; }

  std::string server_gone() const {
    return "rank 0 on " + server_host_ +
           " (the rendezvous server) is gone: its connection closed (killed, crashed, or exited on an error; see its output)";
  }

  unsigned long generation(const std::string& name, char kind) {
    std::lock_guard lock(mutex_);
    return generations_[kind + name]++;
  }

  void send_on_watch(const std::string& data) {
    std::lock_guard lock(watch_write_mutex_);
    try {
      write_all(watch_fd_, data, "the rendezvous");
    } catch (const StoreError&) {
      // The server is gone: the watcher reports that.
    }
  }

  // The liveness connection: blocks until rank 0 announces an abort or goes away.
  void watch() {
    const std::string what = "rank 0 on " + server_host_;
    try {
      for (;;) {
        std::uint32_t size = 0;
        const auto forever = Clock::now() + std::chrono::hours(24 * 365);
        if (!read_exact(watch_fd_, reinterpret_cast<char*>(&size), 4, forever, what, [this] { return closing_.load(); })) return;
        if (size == 0 || size > kMaxFrame) throw StoreError("malformed message from the rendezvous");
        std::string body(size, '\0');
        if (!read_exact(watch_fd_, body.data(), size, forever, what, [this] { return closing_.load(); })) return;
        if (body[0] == kAborted) signal_->raise(body.substr(1));
      }
    } catch (const StoreError&) {
      if (!closing_) signal_->raise(server_gone());
    }
  }

  int connect_to_server() {
    const auto deadline = Clock::now() + timeout_;
    auto backoff = std::chrono::milliseconds(20);
    std::string last_error = "no attempt";
    while (true) {
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* found = nullptr;
      int connected = -1;
      const int rc = ::getaddrinfo(context_.rendezvous_host.c_str(), std::to_string(context_.rendezvous_port).c_str(), &hints, &found);
      if (rc != 0) {
        last_error = std::string("cannot resolve ") + context_.rendezvous_host + ": " + ::gai_strerror(rc);
      } else {
        for (addrinfo* a = found; a; a = a->ai_next) {
          const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
          if (fd < 0) continue;
          if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            const int on = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
            connected = fd;
            break;
          }
          last_error = std::strerror(errno);
          ::close(fd);
        }
        ::freeaddrinfo(found);
      }
      if (connected >= 0) return connected;
      if (Clock::now() + backoff >= deadline)
        throw StoreError("cannot reach the rendezvous at " + where_ + " after " + seconds() + " (rank " + std::to_string(context_.rank) +
                         " of " + std::to_string(context_.size) + ", " + last_error +
                         "): is rank 0 running? is the port blocked? (--rendezvous HOST:PORT overrides)");
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
    }
  }

  // One request and its reply on `fd`; an abort (announced or seen) ends the wait with PeerFailure.
  std::string exchange(int fd, const std::string& request, const std::string& what) {
    if (signal_->raised()) throw PeerFailure(signal_->message());
    const auto deadline = Clock::now() + timeout_;
    const auto stop = [this] { return signal_->raised(); };
    std::uint32_t size = 0;
    std::string reply;
    try {
      write_all(fd, request, "the rendezvous at " + where_);
      if (!read_exact(fd, reinterpret_cast<char*>(&size), 4, deadline, where_, stop)) {
        if (signal_->raised()) throw PeerFailure(signal_->message());
        throw StoreError("timed out after " + seconds() + " waiting for " + what + " at " + where_ + " (rank " +
                         std::to_string(context_.rank) + ")");
      }
      if (size == 0 || size > (1u << 30)) throw StoreError("malformed reply from the rendezvous at " + where_ + " for " + what);
      reply.assign(size, '\0');
      if (!read_exact(fd, reply.data(), size, deadline, where_, stop)) {
        if (signal_->raised()) throw PeerFailure(signal_->message());
        throw StoreError("timed out reading " + what + " from " + where_);
      }
    } catch (const PeerFailure&) {
      throw;
    } catch (const StoreError&) {
      if (Clock::now() >= deadline) throw;
      // The connection closed: rank 0 is gone, or announced why on the liveness connection.
      for (int i = 0; i < 20 && !signal_->raised(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      signal_->raise(server_gone());
      throw PeerFailure(signal_->message());
    }
    if (reply[0] == kAborted) {
      signal_->raise(reply.substr(1));
      throw PeerFailure(signal_->message());
    }
    if (reply[0] == kRejected) throw StoreError(reply.substr(1) + " (rank " + std::to_string(context_.rank) + ", " + what + ")");
    return reply.substr(1);
  }

  std::string call(char op, const std::string& key, const std::string& value, const std::string& what) {
    std::lock_guard lock(mutex_call_);
    return exchange(fd_, encode(op, key, value), what);
  }

  LaunchContext context_;
  std::chrono::milliseconds timeout_;
  std::string where_, server_host_;
  std::string key_;
  std::unique_ptr<Server> server_;
  std::shared_ptr<AbortSignal> signal_;
  int fd_ = -1, watch_fd_ = -1;
  std::atomic<bool> closing_{false};
  std::thread watcher_;
  std::mutex mutex_, mutex_call_, watch_write_mutex_;
  std::map<std::string, unsigned long> generations_;
};

}  // namespace

std::unique_ptr<Store> connect_store(const LaunchContext& context, std::chrono::milliseconds timeout) {
  return std::make_unique<TcpStore>(context, timeout);
}

}  // namespace gpudirect::bootstrap
