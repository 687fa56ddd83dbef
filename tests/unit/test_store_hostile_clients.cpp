// Rank 0's rendezvous server against clients that are not well-behaved ranks: each gets an error
// (or is dropped), and the real ranks finish their work as if nothing happened.
#include <catch2/catch.hpp>

#include "bootstrap/local_spawn.hpp"
#include "bootstrap/store.hpp"
#include "store_test_ranks.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

using namespace gpudirect::bootstrap;
using gpudirect::bootstrap::testing::rank_of;
using namespace std::chrono_literals;

namespace {

// A raw TCP client: connects (retrying until the server listens), writes bytes, reads what comes.
class RawClient {
 public:
  explicit RawClient(int port) {
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
  void write(const std::string& bytes) {
    CHECK(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()));
  }
  // Everything the server sends until it closes the connection or `wait` passes.
  std::string read_all(std::chrono::milliseconds wait) {
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char buffer[4096];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      out.append(buffer, static_cast<std::size_t>(n));
    }
    return out;
  }

 private:
  int fd_ = -1;
};

std::string u32(std::uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string request(char op, const std::string& key, const std::string& value) {
  return u32(static_cast<std::uint32_t>(5 + key.size() + value.size())) + op + u32(static_cast<std::uint32_t>(key.size())) + key + value;
}

// Two real ranks do a store round trip while `hostile` runs against the same server.
template <typename Hostile>
void ranks_survive(Hostile hostile) {
  const int port = free_local_port();
  std::vector<std::string> gathered(2);
  std::thread rank1([&] {
    auto store = connect_store(rank_of(1, 2, port), 10s);
    gathered[1] = store->all_gather("names", "one")[0];
    store->barrier("end");
  });
  {
    auto store = connect_store(rank_of(0, 2, port), 10s);
    hostile(port);
    gathered[0] = store->all_gather("names", "zero")[1];
    store->barrier("end");
    rank1.join();
  }
  CHECK(gathered[0] == "one");
  CHECK(gathered[1] == "zero");
}

}  // namespace

TEST_CASE("an oversized frame length is rejected with a clear error", "[store][hostile]") {
  std::string answer;
  ranks_survive([&](int port) {
    RawClient c(port);
    c.write(u32(0xfffffff0u) + "S");
    answer = c.read_all(2s);
  });
  CHECK_THAT(answer, Catch::Contains("over the limit"));
}

TEST_CASE("a key length that runs past its frame is rejected", "[store][hostile]") {
  std::string answer;
  ranks_survive([&](int port) {
    RawClient c(port);
    c.write(u32(9) + "G" + u32(1000) + "abcd");
    answer = c.read_all(2s);
  });
  CHECK_THAT(answer, Catch::Contains("runs past its frame"));
}

TEST_CASE("unknown operations, short frames and garbage are rejected", "[store][hostile]") {
  std::string unknown, too_short, garbage;
  ranks_survive([&](int port) {
    RawClient a(port), b(port), c(port);
    a.write(request('Z', "key", "value"));
    b.write(u32(2) + "GG");
    c.write("GET / HTTP/1.1\r\nHost: rank0\r\n\r\n");
    unknown = a.read_all(2s);
    too_short = b.read_all(2s);
    garbage = c.read_all(2s);
  });
  CHECK_THAT(unknown, Catch::Contains("unknown operation 0x5a"));
  CHECK_THAT(too_short, Catch::Contains("too short"));
  CHECK_THAT(garbage, Catch::Contains("gpudirect rendezvous:"));
}

TEST_CASE("bad arithmetic and impostor hellos are rejected", "[store][hostile]") {
  std::string add, hello, bye;
  ranks_survive([&](int port) {
    RawClient a(port), b(port), c(port);
    a.write(request('A', "counter", "12x"));
    b.write(request('H', "99", "intruder"));
    c.write(request('B', "", ""));
    add = a.read_all(2s);
    hello = b.read_all(2s);
    bye = c.read_all(2s);
  });
  CHECK_THAT(add, Catch::Contains("'12x' is not an integer"));
  CHECK_THAT(hello, Catch::Contains("hello from rank '99'"));
  CHECK_THAT(bye, Catch::Contains("goodbye before hello"));
}

TEST_CASE("clients that connect and hang, or stop mid-frame, or never read, block nobody", "[store][hostile]") {
  ranks_survive([&](int port) {
    static std::vector<std::unique_ptr<RawClient>> idle;  // stay connected while the ranks work
    idle.clear();
    idle.push_back(std::make_unique<RawClient>(port));  // says nothing
    idle.push_back(std::make_unique<RawClient>(port));
    idle.back()->write(u32(100) + "S" + u32(3) + "ab");  // half a frame
    idle.push_back(std::make_unique<RawClient>(port));
    std::string many;  // requests whose answers it never reads
    for (int i = 0; i < 2000; ++i) many += request('T', "nothing", "");
    idle.back()->write(many);
  });
}
