#include "gpudirect/topology_cache.hpp"

#include "gpudirect/text.hpp"
#include "gpudirect/topology_sources.hpp"
#include "topology/xml.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <hwloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

namespace gpudirect {
namespace {

constexpr off_t kMaxCacheBytes = 64 << 20;

std::string errno_text() { return std::strerror(errno); }

std::string hex(std::size_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "%016zx", value);
  return text;
}

// The whole of a small file (sysfs, procfs: their size is not known in advance); "" if unreadable.
std::string read_small(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  char buffer[4096];
  ssize_t got;
  while ((got = ::read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(got));
  ::close(fd);
  return std::string(trim(text));
}

// The entries of a directory, sorted and joined with ','; "-" when it does not exist.
std::string entry_names(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return "-";
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir))
    if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0) names.emplace_back(entry->d_name);
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ",") + name;
  return joined;
}

// Owned by root or by this process's user, and writable by no one else.
bool trusted_owner_and_mode(const struct stat& info, const std::string& path, std::string& why) {
  if (info.st_uid != 0 && info.st_uid != ::geteuid()) {
    why = path + " is owned by uid " + std::to_string(info.st_uid) + ", not root: ignored (remove it)";
    return false;
  }
  if (info.st_mode & (S_IWGRP | S_IWOTH)) {
    why = path + " is writable by group or others: ignored (chmod go-w, or remove it)";
    return false;
  }
  return true;
}

bool trusted_dir(const std::string& dir, std::string& why) {
  struct stat info {};
  if (::lstat(dir.c_str(), &info) != 0) {
    why = "cannot use the topology cache " + dir + ": " + errno_text();
    return false;
  }
  if (!S_ISDIR(info.st_mode)) {
    why = dir + " is not a directory (a symbolic link is not followed): the topology cache is off";
    return false;
  }
  return trusted_owner_and_mode(info, dir, why);
}

// The cache file's bytes, if it is one this process may trust; `why` says why not.
std::optional<std::string> read_trusted(const std::string& path, std::string& why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) why = "cannot open " + path + ": " + errno_text() + " (a symbolic link is not followed)";
    return std::nullopt;
  }
  std::optional<std::string> bytes;
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    why = "cannot stat " + path + ": " + errno_text();
  } else if (!S_ISREG(info.st_mode)) {
    why = path + " is not a regular file: ignored";
  } else if (info.st_size > kMaxCacheBytes) {
    why = path + " is larger than 64 MiB: ignored";
  } else if (trusted_owner_and_mode(info, path, why)) {
    std::string text;
    text.resize(static_cast<std::size_t>(info.st_size));
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t got = ::read(fd, text.data() + done, text.size() - done);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      done += static_cast<std::size_t>(got);
    }
    if (done == text.size())
      bytes = std::move(text);
    else
      why = "cannot read " + path + ": " + (done < text.size() ? "short read" : errno_text());
  }
  ::close(fd);
  return bytes;
}

std::string body_line(const std::string& body) {
  return "body " + std::to_string(body.size()) + " " + hex(std::hash<std::string>{}(body)) + "\n";
}

// The XML after the key and the body line, if the file was written under `key` and is intact.
std::optional<std::string> body_for_key(const std::string& bytes, const std::string& key, const std::string& path, std::string& why) {
  if (bytes.compare(0, key.size(), key) != 0) return std::nullopt;  // another boot, file or hardware: stale
  const std::size_t line_end = bytes.find('\n', key.size());
  if (line_end != std::string::npos) {
    std::string body = bytes.substr(line_end + 1);
    if (bytes.compare(key.size(), line_end + 1 - key.size(), body_line(body)) == 0) return body;
  }
  why = path + " is corrupt (size or checksum): loading the topology again";
  return std::nullopt;
}

void write_cache(const std::string& dir, const std::string& path, const std::string& contents, std::string& why) {
  if (::mkdir(dir.c_str(), 0755) == 0) {
    ::chmod(dir.c_str(), 0755);  // whatever the umask: readable by all, writable by its owner only
  } else if (errno != EEXIST) {
    why = "cannot create the topology cache " + dir + ": " + errno_text();
    return;
  }
  struct stat info {};
  if (!trusted_dir(dir, why)) return;
  if (::lstat(dir.c_str(), &info) != 0 || info.st_uid != ::geteuid()) {
    why = "the topology cache " + dir + " belongs to another user: not written";
    return;
  }
  std::string temporary = dir + "/.topology-XXXXXX";
  const int fd = ::mkstemp(temporary.data());  // O_EXCL: never an existing file or link
  if (fd < 0) {
    why = "cannot write the topology cache in " + dir + ": " + errno_text();
    return;
  }
  bool ok = ::fchmod(fd, 0644) == 0;
  for (std::size_t done = 0; ok && done < contents.size();) {
    const ssize_t wrote = ::write(fd, contents.data() + done, contents.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    ok = wrote > 0;
    if (ok) done += static_cast<std::size_t>(wrote);
  }
  const std::string failure = ok ? "" : errno_text();
  ok = ::close(fd) == 0 && ok;
  if (ok && ::rename(temporary.c_str(), path.c_str()) == 0) return;
  why = "cannot write the topology cache " + path + ": " + (failure.empty() ? errno_text() : failure);
  ::unlink(temporary.c_str());
}

}  // namespace

std::string topology_cache_key(const std::string& topology_file, const TopologyCacheConfig& config) {
  std::string key = "gpudirect-slurm topology cache 1\nhwloc " + std::to_string(hwloc_get_api_version()) + "\n";
  key += "boot " + read_small(config.boot_id_path) + "\n";
  if (topology_file.empty()) {
    const std::string& sys = config.sysfs_root;
    key += "source live\n";
    key += "pci " + entry_names(sys + "/bus/pci/devices") + "\n";
    key += "net " + entry_names(sys + "/class/net") + "\n";
    key += "infiniband " + entry_names(sys + "/class/infiniband") + "\n";
    key += "cpus " + read_small(sys + "/devices/system/cpu/online") + "\n";
    return key;
  }
  // The file's bytes, not its timestamps: a rewrite within the clock's granularity is still seen.
  std::string bytes;
  try {
    bytes = topology_xml::read_file(topology_file);
  } catch (const TopologyError&) {
    return key + "source file " + topology_file + " unreadable\n";
  }
  return key + "source file " + topology_file + " " + std::to_string(bytes.size()) + " " + hex(std::hash<std::string>{}(bytes)) + "\n";
}

std::string topology_cache_path(const std::string& topology_file, const TopologyCacheConfig& config) {
  return config.dir + "/topology-" + (topology_file.empty() ? std::string("live") : hex(std::hash<std::string>{}(topology_file))) +
         ".cache";
}

CachedTopology load_topology_cached(const std::string& topology_file, const TopologyCacheConfig& config) {
  CachedTopology out;
  if (config.dir.empty()) {
    out.topology = topology_file.empty() ? load_live_topology() : load_topology_file(topology_file);
    return out;
  }
  const std::string key = topology_cache_key(topology_file, config);
  const std::string path = topology_cache_path(topology_file, config);
  struct stat dir_info {};
  const bool dir_exists = ::lstat(config.dir.c_str(), &dir_info) == 0;
  if (dir_exists && !trusted_dir(config.dir, out.note)) {
    out.topology = topology_file.empty() ? load_live_topology() : load_topology_file(topology_file);
    return out;
  }
  if (dir_exists) {
    if (const auto bytes = read_trusted(path, out.note)) {
      if (const auto body = body_for_key(*bytes, key, path, out.note)) {
        try {
          out.topology = load_exported_hwloc_xml(*body, topology_file.empty() ? "hwloc" : "hwloc-xml:" + topology_file);
          out.from_cache = true;
          return out;
        } catch (const TopologyError& e) {
          out.note = path + ": " + e.what() + ": loading the topology again";
        }
      }
    }
  }
  std::string xml;
  out.topology = topology_file.empty() ? load_live_topology(&xml) : load_topology_file(topology_file, &xml);
  if (xml.empty()) return out;  // an NCCL topology file: nothing hwloc can export
  std::string why;
  write_cache(config.dir, path, key + body_line(xml) + xml, why);
  if (!why.empty()) out.note += (out.note.empty() ? "" : "; ") + why;
  return out;
}

}  // namespace gpudirect
