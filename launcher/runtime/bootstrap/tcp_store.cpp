// The rendezvous store over TCP: rank 0 serves from a thread (poll loop), every rank is a client.
// Wire format: u32 length, then op byte, u32 key length, key, value. GET is answered when the key
// exists; the client bounds every wait with its deadline, so nothing can hang forever.
#include "bootstrap/store.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <thread>

namespace gpudirect::bootstrap {
namespace {

using Clock = std::chrono::steady_clock;
enum Op : char { kSet = 'S', kGet = 'G', kTryGet = 'T', kAdd = 'A' };

std::string encode(char op, const std::string& key, const std::string& value) {
  std::string body(1, op);
  const auto key_size = static_cast<std::uint32_t>(key.size());
  body.append(reinterpret_cast<const char*>(&key_size), 4).append(key).append(value);
  const auto size = static_cast<std::uint32_t>(body.size());
  return std::string(reinterpret_cast<const char*>(&size), 4) + body;
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

// Writes all of `data` or throws; `what` names the peer for the message.
void write_all(int fd, const std::string& data, const std::string& what) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw StoreError("lost the connection to " + what + ": " + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

// Reads exactly `size` bytes before `deadline`; false on timeout.
bool read_exact(int fd, char* out, std::size_t size, Clock::time_point deadline, const std::string& what) {
  std::size_t done = 0;
  while (done < size) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, remaining_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return false;
    const ssize_t n = ::recv(fd, out + done, size - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw StoreError("lost the connection to " + what + " (did rank 0 exit?)");
    done += static_cast<std::size_t>(n);
  }
  return true;
}

class Server {
 public:
  Server(int port, int expected_clients) : expected_clients_(expected_clients) {
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

  // Until every client that ever connected has said goodbye, or the deadline.
  void wait_for_clients(Clock::time_point deadline) {
    while (Clock::now() < deadline && (closed_ < expected_clients_ || open_ > 0))
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }

 private:
  struct Client {
    std::string in;
  };

  void loop() {
    while (!stop_) {
      std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
      for (auto& [fd, client] : clients_) fds.push_back({fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
          const int on = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
          clients_[fd];
          ++open_;
        }
      }
      for (std::size_t i = 1; i < fds.size(); ++i)
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) serve(fds[i].fd);
    }
  }

  void drop(int fd) {
    ::close(fd);
    clients_.erase(fd);
    std::erase_if(waiting_, [fd](const auto& w) { return w.second == fd; });
    --open_;
    ++closed_;
  }

  void reply(int fd, const std::string& value) {
    const auto size = static_cast<std::uint32_t>(value.size());
    try {
      write_all(fd, std::string(reinterpret_cast<const char*>(&size), 4) + value, "a client");
    } catch (const StoreError&) {
      drop(fd);
    }
  }

  void serve(int fd) {
    char buffer[65536];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) {
      drop(fd);
      return;
    }
    std::string& in = clients_[fd].in;
    in.append(buffer, static_cast<std::size_t>(n));
    while (in.size() >= 4) {
      std::uint32_t size = 0;
      std::memcpy(&size, in.data(), 4);
      if (in.size() < 4 + size) break;
      const std::string body = in.substr(4, size);
      in.erase(0, 4 + size);
      if (body.size() < 5) {
        drop(fd);
        return;
      }
      std::uint32_t key_size = 0;
      std::memcpy(&key_size, body.data() + 1, 4);
      if (5 + key_size > body.size()) {
        drop(fd);
        return;
      }
      handle(fd, body[0], body.substr(5, key_size), body.substr(5 + key_size));
      if (!clients_.count(fd)) return;
    }
  }

  void handle(int fd, char op, const std::string& key, const std::string& value) {
    switch (op) {
      case kSet: {
        data_[key] = value;
        reply(fd, "");
        for (auto it = waiting_.begin(); it != waiting_.end();) {
          if (it->first == key) {
            const int waiter = it->second;
            it = waiting_.erase(it);
            reply(waiter, value);
          } else {
            ++it;
          }
        }
        break;
      }
      case kGet:
        if (auto it = data_.find(key); it != data_.end()) reply(fd, it->second);
        else waiting_.emplace_back(key, fd);
        break;
      case kTryGet:
        if (auto it = data_.find(key); it != data_.end()) reply(fd, "1" + it->second);
        else reply(fd, "0");
        break;
      case kAdd: {
        const long long next = (data_.count(key) ? std::stoll(data_[key]) : 0) + std::stoll(value);
        data_[key] = std::to_string(next);
        reply(fd, data_[key]);
        break;
      }
      default:
        drop(fd);
    }
  }

  int listen_fd_ = -1;
  int expected_clients_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> open_{0};
  std::atomic<int> closed_{0};
  std::map<int, Client> clients_;
  std::map<std::string, std::string> data_;
  std::vector<std::pair<std::string, int>> waiting_;
  std::thread thread_;
};

class TcpStore final : public Store {
 public:
  TcpStore(const LaunchContext& context, std::chrono::milliseconds timeout) : context_(context), timeout_(timeout) {
    where_ = context.rendezvous_host + ":" + std::to_string(context.rendezvous_port);
    if (context.rank == 0) server_ = std::make_unique<Server>(context.rendezvous_port, context.size);
    connect_to_server();
  }

  ~TcpStore() override {
    if (fd_ >= 0) ::close(fd_);
    // Rank 0 keeps serving until the others have left, so nobody loses the store mid-call.
    if (server_) server_->wait_for_clients(Clock::now() + timeout_);
  }

  void set(const std::string& key, const std::string& value) override { call(kSet, key, value, "set " + key); }

  std::string get(const std::string& key) override { return call(kGet, key, "", "the key '" + key + "'"); }

  void barrier(const std::string& name) override {
    const std::string count_key = "barrier/" + name + "/count";
    const long long arrived = std::stoll(call(kAdd, count_key, "1", "barrier " + name));
    if (arrived == context_.size) call(kSet, "barrier/" + name + "/done", "", "barrier " + name);
    try {
      call(kGet, "barrier/" + name + "/done", "", "barrier " + name);
    } catch (const StoreError&) {
      const std::string now = call(kTryGet, count_key, "", "barrier " + name);
      throw StoreError("barrier '" + name + "': only " + now.substr(1) + " of " + std::to_string(context_.size) +
                       " ranks arrived within " + seconds() + " (rank " + std::to_string(context_.rank) +
                       "): a rank failed or is stuck; check the other ranks' output");
    }
  }

  std::vector<std::string> all_gather(const std::string& name, const std::string& value) override {
    set("gather/" + name + "/" + std::to_string(context_.rank), value);
    std::vector<std::string> out;
    for (int r = 0; r < context_.size; ++r) {
      try {
        out.push_back(get("gather/" + name + "/" + std::to_string(r)));
      } catch (const StoreError&) {
        throw StoreError("all_gather '" + name + "': rank " + std::to_string(r) + " of " + std::to_string(context_.size) +
                         " did not contribute within " + seconds() + ": it failed, is stuck, or runs another command");
      }
    }
    return out;
  }

 private:
  std::string seconds() const { return std::to_string(static_cast<double>(timeout_.count()) / 1000.0).substr(0, 4) + " s"; }

  void connect_to_server() {
    const auto deadline = Clock::now() + timeout_;
    auto backoff = std::chrono::milliseconds(20);
    std::string last_error = "no attempt";
    while (true) {
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* found = nullptr;
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
            fd_ = fd;
            break;
          }
          last_error = std::strerror(errno);
          ::close(fd);
        }
        ::freeaddrinfo(found);
      }
      if (fd_ >= 0) return;
      if (Clock::now() + backoff >= deadline)
        throw StoreError("cannot reach the rendezvous at " + where_ + " after " + seconds() + " (rank " +
                         std::to_string(context_.rank) + " of " + std::to_string(context_.size) + ", " + last_error +
                         "): is rank 0 running? is the port blocked? (--rendezvous HOST:PORT overrides)");
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
    }
  }

  std::string call(char op, const std::string& key, const std::string& value, const std::string& what) {
    write_all(fd_, encode(op, key, value), "the rendezvous at " + where_);
    const auto deadline = Clock::now() + timeout_;
    std::uint32_t size = 0;
    if (!read_exact(fd_, reinterpret_cast<char*>(&size), 4, deadline, "the rendezvous at " + where_))
      throw StoreError("timed out after " + seconds() + " waiting for " + what + " at " + where_ + " (rank " +
                       std::to_string(context_.rank) + ")");
    std::string reply(size, '\0');
    if (size > 0 && !read_exact(fd_, reply.data(), size, deadline, "the rendezvous at " + where_))
      throw StoreError("timed out reading " + what + " from " + where_);
    return reply;
  }

  LaunchContext context_;
  std::chrono::milliseconds timeout_;
  std::string where_;
  std::unique_ptr<Server> server_;
  int fd_ = -1;
};

}  // namespace

std::unique_ptr<Store> connect_store(const LaunchContext& context, std::chrono::milliseconds timeout) {
  return std::make_unique<TcpStore>(context, timeout);
}

}  // namespace gpudirect::bootstrap
