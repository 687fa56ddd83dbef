// Rank 0's rendezvous server against clients that are not well-behaved ranks: each gets an error
// (or is dropped), and the real ranks finish their work as if nothing happened. These clients hold
// the step's secret (a rank gone wrong); test_store_authentication.cpp has the ones that do not.
#include <catch2/catch.hpp>

#include "bootstrap/local_spawn.hpp"
#include "bootstrap/store.hpp"
#include "gpudirect/rendezvous_secret.hpp"
#include "store_raw_client.hpp"
#include "store_ranks_survive.hpp"
#include "store_test_ranks.hpp"

#include <chrono>

using namespace gpudirect::bootstrap;
using namespace gpudirect::bootstrap::testing;
using namespace std::chrono_literals;

namespace {

// A client that has proved the step's secret: what it sends next reaches the request parser.
std::unique_ptr<RawClient> proven_client(int port) {
  auto client = std::make_unique<RawClient>(port);
  REQUIRE(client->prove(gpudirect::decode_rendezvous_secret(kTestSecret)));
  return client;
}

}  // namespace

TEST_CASE("an oversized frame length is rejected with a clear error", "[store][hostile]") {
  std::string answer;
  ranks_survive([&](int port) {
    auto c = proven_client(port);
    c->write(u32(0xfffffff0u) + "S");
    answer = c->read_all(2s);
  });
  CHECK_THAT(answer, Catch::Contains("over the limit"));
}

TEST_CASE("a key length that runs past its frame is rejected", "[store][hostile]") {
  std::string answer;
  ranks_survive([&](int port) {
    auto c = proven_client(port);
    c->write(u32(9) + "G" + u32(1000) + "abcd");
    answer = c->read_all(2s);
  });
  CHECK_THAT(answer, Catch::Contains("runs past its frame"));
}

TEST_CASE("unknown operations, short frames and garbage are rejected", "[store][hostile]") {
  std::string unknown, too_short, garbage;
  ranks_survive([&](int port) {
    auto a = proven_client(port), b = proven_client(port), c = proven_client(port);
    a->write(request('Z', "key", "value"));
    b->write(u32(2) + "GG");
    c->write("GET / HTTP/1.1\r\nHost: rank0\r\n\r\n");
    unknown = a->read_all(2s);
    too_short = b->read_all(2s);
    garbage = c->read_all(2s);
  });
  CHECK_THAT(unknown, Catch::Contains("unknown operation 0x5a"));
  CHECK_THAT(too_short, Catch::Contains("too short"));
  CHECK_THAT(garbage, Catch::Contains("gpudirect rendezvous:"));
}

TEST_CASE("bad arithmetic and impostor hellos are rejected", "[store][hostile]") {
  std::string add, hello, bye;
  ranks_survive([&](int port) {
    auto a = proven_client(port), b = proven_client(port), c = proven_client(port);
    a->write(request('A', "counter", "12x"));
    b->write(request('H', "99", "intruder"));
    c->write(request('B', "", ""));
    add = a->read_all(2s);
    hello = b->read_all(2s);
    bye = c->read_all(2s);
  });
  CHECK_THAT(add, Catch::Contains("'12x' is not an integer"));
  CHECK_THAT(hello, Catch::Contains("hello from rank '99'"));
  CHECK_THAT(bye, Catch::Contains("goodbye before hello"));
}

TEST_CASE("clients that connect and hang, or stop mid-frame, or never read, block nobody", "[store][hostile]") {
  ranks_survive([&](int port) {
    static std::vector<std::unique_ptr<RawClient>> idle;  // stay connected while the ranks work
    idle.clear();
    idle.push_back(std::make_unique<RawClient>(port));  // says nothing, not even an answer to the challenge
    idle.push_back(std::make_unique<RawClient>(port));
    idle.back()->write(u32(65) + "P" + std::string(20, 'x'));  // half an answer to the challenge
    idle.push_back(proven_client(port));                       // proves the secret, then says nothing
    idle.push_back(proven_client(port));
    idle.back()->write(u32(100) + "S" + u32(3) + "ab");  // half a frame
    idle.push_back(proven_client(port));
    std::string many;  // requests whose answers it never reads
    for (int i = 0; i < 2000; ++i) many += request('T', "nothing", "");
    idle.back()->write(many);
  });
}
