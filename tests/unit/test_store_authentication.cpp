// The rendezvous serves only peers that prove the step's secret (store.hpp, rendezvous_auth.hpp):
// a stranger who reaches rank 0's port (no secret, a wrong one, or an answer captured from another
// connection) is refused before any request, reads and writes no key, learns nothing of the job,
// is named in one line on rank 0's stderr, and the ranks finish their work.
#include <catch2/catch.hpp>

#include "bootstrap/local_spawn.hpp"
#include "bootstrap/store.hpp"
#include "gpudirect/rendezvous_secret.hpp"
#include "store_raw_client.hpp"
#include "store_ranks_survive.hpp"
#include "store_test_ranks.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

using namespace gpudirect::bootstrap;
using namespace gpudirect::bootstrap::testing;
using namespace std::chrono_literals;

namespace {

const std::string kKey = gpudirect::decode_rendezvous_secret(kTestSecret);

// What this process writes on stderr while it lives (fd 2 goes to a temporary file).
class StderrCapture {
 public:
  StderrCapture() : file_(std::tmpfile()), saved_(::dup(STDERR_FILENO)) {
    REQUIRE(file_);
    std::fflush(stderr);
    ::dup2(::fileno(file_), STDERR_FILENO);
  }
  ~StderrCapture() { restore(); }
  std::string text() {
    restore();
    std::rewind(file_);
    std::string out;
    char buffer[4096];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, file_)) > 0) out.append(buffer, n);
    return out;
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    saved_ = -1;
  }
  FILE* file_;
  int saved_;
};

std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos) out.push_back(line);
  return out;
}

// What an authenticated peer reads for `key` with TryGet: "+1VALUE", or "+0" when absent.
std::string try_get(RawClient& client, const std::string& key) {
  client.write(request('T', key, ""));
  return client.read_frame();
}

}  // namespace

TEST_CASE("a peer without the step's secret is refused before any request, reads and writes no key, and is named in one line",
          "[store][auth]") {
  StderrCapture captured;
  std::string no_secret_saw, wrong_secret_saw, replay_saw, challenge, intruder, rank_host;
  std::string no_secret_at, wrong_secret_at, replay_at;
  ranks_survive([&](int port) {
    {
      // No secret at all: it gets a nonce, then asks for a rank's host and writes a key of its own.
      RawClient stranger(port);
      no_secret_at = stranger.address();
      challenge = stranger.read_frame();
      stranger.write(request('G', "rank-hosts/0", "") + request('S', "intruder", "x") + request('T', "intruder", ""));
      no_secret_saw = stranger.read_all(2s);
      CHECK_THAT(no_secret_saw, !Catch::Contains("host0") && !Catch::Contains("+1x"));
    }
    {
      // A wrong secret: its answer to the challenge, and requests right behind it, are refused.
      RawClient wrong(port);
      wrong_secret_at = wrong.address();
      const std::string challenge_frame = wrong.read_frame(), client_nonce = random_nonce();
      const std::string nonce = challenge_frame.substr(std::min<std::size_t>(1, challenge_frame.size()));
      const std::string wrong_key = gpudirect::decode_rendezvous_secret(std::string(64, 'f'));
      wrong.write(proof_frame(client_nonce, client_proof(wrong_key, nonce, client_nonce)) + request('T', "rank-hosts/0", "") +
                  request('S', "intruder", "x"));
      wrong_secret_saw = wrong.read_all(2s);
      CHECK_THAT(wrong_secret_saw, !Catch::Contains("host0"));
    }
    {
      // A replay: a rank's answer to one connection's nonce (valid there) sent on another.
      RawClient sniffed(port), replayer(port);
      const std::string first_challenge = sniffed.read_frame(), client_nonce = random_nonce();
      CHECK(first_challenge.size() == 1 + kNonceSize);
      const std::string first_nonce = first_challenge.substr(std::min<std::size_t>(1, first_challenge.size()));
      const std::string captured_answer = proof_frame(client_nonce, client_proof(kKey, first_nonce, client_nonce));
      sniffed.write(captured_answer);
      CHECK(sniffed.read_frame().substr(0, 1) == "+");  // it was a right answer, where it was given
      replay_at = replayer.address();
      CHECK(replayer.read_frame() != first_challenge);
      replayer.write(captured_answer + request('T', "rank-hosts/0", "") + request('S', "intruder", "x"));
      replay_saw = replayer.read_all(2s);
    }
    // A peer with the secret sees the ranks' keys, and no key of the strangers'.
    RawClient rank_like(port);
    CHECK(rank_like.prove(kKey));
    rank_host = try_get(rank_like, "rank-hosts/0");
    intruder = try_get(rank_like, "intruder");
  });
  CHECK(challenge.size() == 1 + kNonceSize);
  CHECK(challenge[0] == '?');
  CHECK(rank_host == "+1host0");  // what the strangers asked for was there to read
  CHECK(intruder == "+0");        // and what they wrote never was
  for (const std::string& saw : {no_secret_saw, wrong_secret_saw, replay_saw}) {
    CHECK_THAT(saw, Catch::Contains("refused: this connection did not prove the step's secret"));
    CHECK_THAT(saw, !Catch::Contains("host0") && !Catch::Contains("host1") && !Catch::Contains("rank-hosts") && !Catch::Contains("names"));
  }
  CHECK_THAT(no_secret_saw, !Catch::Contains("+1x"));
  const std::string log = captured.text();
  const auto refusals = lines_with(log, "gpudirect-launch: rendezvous: refused a connection from ");
  CHECK(refusals.size() == 3);
  for (const std::string& at : {no_secret_at, wrong_secret_at, replay_at}) CHECK(lines_with(log, "from " + at + ":").size() == 1);
}

TEST_CASE("a rank with another secret, or facing a server that cannot prove the secret, fails with a clear error", "[store][auth]") {
  const int port = free_local_port();
  std::string other_secret_error;
  {
    std::thread rank0([&] {
      auto store = connect_store(rank_of(0, 2, port), 1s);
      CHECK_THROWS(store->barrier("never"));  // rank 1 never arrives
    });
    auto other = rank_of(1, 2, port);
    other.rendezvous_secret = std::string(64, 'a');
    try {
      connect_store(other, 2s);
    } catch (const StoreError& e) {
      other_secret_error = e.what();
    }
    rank0.join();
  }
  CHECK_THAT(other_secret_error, Catch::Contains("did not prove the step's secret") && Catch::Contains("rank 1"));

  // A squatter on the port: it sends a challenge, takes the rank's answer and claims success.
  const int squat_port = free_local_port();
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(squat_port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int on = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(listener, 4) == 0);
  std::thread squatter([&] {
    const int fd = ::accept(listener, nullptr, nullptr);
    const std::string challenge = u32(1 + kNonceSize) + '?' + std::string(kNonceSize, 'n');
    ::send(fd, challenge.data(), challenge.size(), MSG_NOSIGNAL);
    char answer[4 + 1 + kNonceSize + kProofSize];
    std::size_t got = 0;
    while (got < sizeof answer) {
      const ssize_t n = ::recv(fd, answer + got, sizeof answer - got, 0);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    const std::string accepted = u32(1 + kProofSize) + '+' + std::string(kProofSize, 'p');
    ::send(fd, accepted.data(), accepted.size(), MSG_NOSIGNAL);
    char rest[64];
    while (::recv(fd, rest, sizeof rest, 0) > 0) {
    }
    ::close(fd);
  });
  CHECK_THROWS_WITH(connect_store(rank_of(1, 2, squat_port), 2s),
                    Catch::Contains("the process at 127.0.0.1:" + std::to_string(squat_port) + " did not prove the step's secret"));
  squatter.join();
  ::close(listener);
}

TEST_CASE("without a secret, or with a malformed one, a rank refuses to start and says how to fix it", "[store][auth]") {
  auto none = rank_of(1, 2, free_local_port());
  none.rendezvous_secret.clear();
  none.origin = "torchrun";
  CHECK_THROWS_WITH(connect_store(none, 1s),
                    Catch::Contains("no GPUDIRECT_RENDEZVOUS_SECRET") && Catch::Contains("rank 1 of 2, torchrun") &&
                        Catch::Contains("export GPUDIRECT_RENDEZVOUS_SECRET=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \\n')") &&
                        Catch::Contains("install the plugin"));
  auto short_one = rank_of(1, 2, free_local_port());
  short_one.rendezvous_secret = "abc";
  CHECK_THROWS_WITH(connect_store(short_one, 1s), Catch::Contains("GPUDIRECT_RENDEZVOUS_SECRET has 3 characters"));
  auto not_hex = rank_of(1, 2, free_local_port());
  not_hex.rendezvous_secret = "secret-secret-secret-secret-1234";
  CHECK_THROWS_WITH(connect_store(not_hex, 1s), Catch::Contains("not a hex digit") && !Catch::Contains("secret-secret"));
}

TEST_CASE("a flood of refused peers is named in at most 10 lines a minute, the rest counted", "[store][auth]") {
  StderrCapture captured;
  ranks_survive([&](int port) {
    for (int i = 0; i < 30; ++i) {
      RawClient stranger(port);
      stranger.write("GET / HTTP/1.1\r\n\r\n");
      stranger.read_all(2s);  // refused and closed
    }
  });
  const std::string log = captured.text();
  CHECK(lines_with(log, "refused a connection from 127.0.0.1:").size() == 10);
  CHECK(lines_with(log, "refused 20 more connections without naming them").size() == 1);
}

TEST_CASE("a peer that connects and never answers the challenge is dropped within the store's timeout", "[store][auth]") {
  StderrCapture captured;
  const int port = free_local_port();
  auto store = connect_store(rank_of(0, 1, port), 1s);
  RawClient silent(port);
  const auto start = std::chrono::steady_clock::now();
  const std::string saw = silent.read_all(5s);
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(took >= 900ms);
  CHECK(took < 3s);
  CHECK_THAT(saw, Catch::Contains("refused"));
  store->set("still", "serving");
  CHECK(store->get("still") == "serving");
  CHECK_THAT(captured.text(), Catch::Contains("no answer to the challenge within 1000 ms"));
}
