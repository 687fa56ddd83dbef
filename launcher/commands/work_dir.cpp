#include "work_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <vector>

namespace gpudirect::launcher {
namespace {

std::string cause() { return std::strerror(errno); }

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

void check_existing(const std::string& dir, const struct stat& st) {
  const std::string fix = "; give a --work-dir of your own (mode 0700), or leave it out for a new one";
  if (S_ISLNK(st.st_mode)) throw WorkDirError("--work-dir " + dir + " is a symbolic link: refused (a link can be moved elsewhere)" + fix);
  if (!S_ISDIR(st.st_mode)) throw WorkDirError("--work-dir " + dir + " exists and is not a directory" + fix);
  if (st.st_uid != ::geteuid())
    throw WorkDirError("--work-dir " + dir + " is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
                       std::to_string(::geteuid()) + "): refused, its owner could plant results or links there" + fix);
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    throw WorkDirError("--work-dir " + dir + " is writable by its group or by others (mode " + octal_mode(st.st_mode) +
                       "): refused, they could plant results or links there; chmod go-w " + dir + fix);
}

}  // namespace

std::string prepare_work_dir(const std::string& given, const std::string& prefix) {
  if (given.empty()) {
    const std::time_t now = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
    std::string name = prefix + "-" + stamp + "-XXXXXX";
    std::vector<char> buffer(name.begin(), name.end());
    buffer.push_back('\0');
    if (!::mkdtemp(buffer.data()))
      throw WorkDirError("cannot create a work directory " + name + " in the current directory: " + cause() + " (give --work-dir DIR)");
    return buffer.data();
  }
  struct stat st {};
  if (::lstat(given.c_str(), &st) == 0) {
    check_existing(given, st);
    return given;
  }
  if (errno != ENOENT) throw WorkDirError("cannot use --work-dir " + given + ": " + cause());
  const std::filesystem::path parent = std::filesystem::path(given).parent_path();
  std::error_code error;
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  if (error) throw WorkDirError("cannot create --work-dir " + given + ": " + error.message());
  if (::mkdir(given.c_str(), 0700) != 0) {
    if (errno != EEXIST) throw WorkDirError("cannot create --work-dir " + given + ": " + cause());
    // Someone made it in between: it must pass the same checks.
    if (::lstat(given.c_str(), &st) != 0) throw WorkDirError("cannot use --work-dir " + given + ": " + cause());
    check_existing(given, st);
  }
  return given;
}

void remove_stale(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    throw std::runtime_error("cannot remove the old " + path + ": " + cause() + " (check --work-dir)");
}

int create_run_file(const std::string& path) {
  remove_stale(path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + cause() + " (check --work-dir)");
  return fd;
}

std::optional<std::string> read_own_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::string> text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid()) {
    text.emplace();
    char buffer[8192];
    for (;;) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n > 0) {
        text->append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) text.reset();
      break;
    }
  }
  ::close(fd);
  return text;
}

}  // namespace gpudirect::launcher
