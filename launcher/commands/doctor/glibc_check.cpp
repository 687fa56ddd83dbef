#include "doctor/glibc_check.hpp"

#include "gpudirect/text.hpp"

#include <algorithm>
#include <cctype>

namespace gpudirect::launcher {
namespace {

// "2.2.5" -> {2, 2, 5}; empty unless it is dot-separated numbers.
std::vector<int> numbers(const std::string& text) {
  std::vector<int> out;
  for (const std::string_view part : split(text, '.')) {
    if (part.empty() || part.size() > 6 || !std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
      return {};
    out.push_back(std::stoi(std::string(part)));
  }
  return out;
}

std::string dotted(const std::vector<int>& release) {
  std::string out;
  for (int part : release) out += (out.empty() ? "" : ".") + std::to_string(part);
  return out;
}

}  // namespace

std::vector<int> glibc_release(const std::string& version_name) {
  constexpr std::string_view prefix = "GLIBC_";
  if (!version_name.starts_with(prefix)) return {};
  if (version_name == "GLIBC_ABI_DT_RELR") return {2, 36};
  return numbers(version_name.substr(prefix.size()));
}

GlibcCheck check_glibc_needs(const std::string& library, const std::vector<VersionNeed>& needs, const std::string& glibc_version,
                             const std::string& where) {
  GlibcCheck check;
  std::vector<int> newest;
  for (const VersionNeed& need : needs) {
    const std::vector<int> release = glibc_release(need.version);
    if (!release.empty() && release > newest) {
      newest = release;
      check.needed = need.version;
      check.from = need.file;
    }
  }
  const std::vector<int> have = numbers(glibc_version);
  if (newest.empty() || have.empty() || have >= newest) return check;
  const std::string release = dotted(newest);
  check.problem = "the NCCL net plugin " + library + " needs " + check.needed + " (from " + check.from + ", its ELF version needs), but " +
                  where + " glibc is " + glibc_version + ": the loader refuses the plugin (version `" + check.needed +
                  "' not found) and NCCL reports its network as not found; run an image with glibc " + release +
                  " or newer, or install a build of the plugin for glibc " + glibc_version + " or older";
  return check;
}

}  // namespace gpudirect::launcher
