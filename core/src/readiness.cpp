#include "gpudirect/readiness.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

namespace gpudirect {
namespace {

ReadinessResult check_once(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return {false, path + " does not exist"};
  if (!S_ISSOCK(info.st_mode)) return {true, path + " exists"};
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) return {false, path + " is too long for a unix socket path"};
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return {false, "cannot create a socket: " + std::string(std::strerror(errno))};
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  const int saved = errno;
  ::close(fd);
  if (rc == 0) return {true, path + " accepts connections"};
  return {false, path + " refuses connections (" + std::string(std::strerror(saved)) + ")"};
}

}  // namespace

ReadinessResult wait_until_ready(const std::string& path, int timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    ReadinessResult result = check_once(path);
    if (result.ready) return result;
    if (std::chrono::steady_clock::now() >= deadline) {
      result.detail += " after waiting " + std::to_string(timeout_s) + " s";
      return result;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace gpudirect
