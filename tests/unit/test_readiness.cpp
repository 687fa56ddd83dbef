// RxDM readiness (core/src/readiness.cpp): a ready file exists; a unix socket is ready only when it
// accepts connections (RxDM leaves its socket file behind when it stops).
#include <catch2/catch.hpp>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "gpudirect/readiness.hpp"

using namespace gpudirect;

namespace {

// A unix socket bound at `path`, listening only when asked: bound but not listening, connect() is
// refused exactly as for a socket whose server has gone.
class UnixSocket {
 public:
  explicit UnixSocket(const std::string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    REQUIRE(path.size() < sizeof address.sun_path);
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    REQUIRE(::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  }
  ~UnixSocket() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  void listen() { REQUIRE(::listen(fd_, 4) == 0); }

 private:
  std::string path_;
  int fd_ = -1;
};

std::string temp_socket_path() {
  return (std::filesystem::temp_directory_path() / ("gpudirect-rxdm-" + std::to_string(::getpid()) + ".sock")).string();
}

}  // namespace

TEST_CASE("RxDM readiness: a socket that refuses connections is not ready, one that listens is", "[readiness]") {
  const std::string path = temp_socket_path();
  UnixSocket socket(path);
  const ReadinessResult refused = wait_until_ready(path, 0);
  CHECK_FALSE(refused.ready);
  CHECK_THAT(refused.detail, Catch::Contains(path + " refuses connections"));
  socket.listen();
  const ReadinessResult accepted = wait_until_ready(path, 0);
  CHECK(accepted.ready);
  CHECK(accepted.detail == path + " accepts connections");
}

TEST_CASE("RxDM readiness: a ready file is ready once it exists", "[readiness]") {
  const std::string path = temp_socket_path() + ".ready";
  CHECK_FALSE(wait_until_ready(path, 0).ready);
  { std::ofstream(path).put('1'); }
  const ReadinessResult ready = wait_until_ready(path, 0);
  CHECK(ready.ready);
  CHECK(ready.detail == path + " exists");
  std::filesystem::remove(path);
}
