// The doctor's check of the net plugin's glibc needs (launcher/commands/doctor/glibc_check.hpp):
// the ELF version needs read from the file without loading it, against the glibc the task runs
// with. The stand-in net_plugin/needs_new_glibc/libnccl-net.so needs GLIBC_9.99 (tests/CMakeLists.txt).
#include <catch2/catch.hpp>

#include "doctor/elf_version_needs.hpp"
#include "doctor/glibc_check.hpp"
#include "gpudirect/net_plugin.hpp"
#include "temp_file.hpp"

#include <gnu/libc-version.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>

using namespace gpudirect;
using namespace gpudirect::launcher;

namespace {

const std::string kStandinDir = std::string(GPUDIRECT_NET_PLUGIN_STANDINS) + "/needs_new_glibc";
const std::string kStandin = kStandinDir + "/libnccl-net.so";

std::string file_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

bool contains(const std::vector<VersionNeed>& needs, const VersionNeed& need) {
  return std::find(needs.begin(), needs.end(), need) != needs.end();
}

}  // namespace

TEST_CASE("ELF version needs: the stand-in plugin needs GLIBC_9.99 from libc.so.6", "[doctor][glibc]") {
  const auto needs = elf_version_needs(kStandin);
  CHECK(contains(needs, {"libc.so.6", "GLIBC_9.99"}));
  // The test binary itself: linked against the real glibc, it needs some GLIBC_2.x from libc.so.6.
  const auto own = elf_version_needs("/proc/self/exe");
  CHECK(
      std::any_of(own.begin(), own.end(), [](const VersionNeed& n) { return n.file == "libc.so.6" && n.version.starts_with("GLIBC_2."); }));
  CHECK_FALSE(contains(own, {"libc.so.6", "GLIBC_9.99"}));
}

TEST_CASE("ELF version needs: what is not a whole ELF file is refused with its name and why", "[doctor][glibc]") {
  TempFile text("not-elf.so", "#!/bin/sh\n");
  CHECK_THROWS_WITH(elf_version_needs(text.path()), text.path() + ": not an ELF file (no \\x7fELF at its start)");
  CHECK_THROWS_WITH(elf_version_needs("/nonexistent/libnccl-net.so"), "/nonexistent/libnccl-net.so: cannot be read");
  const std::string bytes = file_bytes(kStandin);
  REQUIRE(bytes.size() > 1000);
  // Cut short: the section headers (at the end of the file) are gone.
  CHECK_THROWS_WITH(elf_version_needs_of(bytes.substr(0, 200), "cut.so"), Catch::StartsWith("cut.so: malformed ELF file: "));
  // Every shorter prefix is refused or read without a crash (the reader checks every offset).
  for (std::size_t size = 0; size < bytes.size(); size += 97) {
    try {
      (void)elf_version_needs_of(bytes.substr(0, size), "prefix.so");
    } catch (const ElfError&) {
    }
  }
  std::string other_class = bytes;
  other_class[4] = 9;  // EI_CLASS neither ELFCLASS32 nor ELFCLASS64
  CHECK_THROWS_WITH(elf_version_needs_of(other_class, "odd.so"), "odd.so: malformed ELF file: neither 32 nor 64 bit");
}

TEST_CASE("ELF version needs: entries that overlap, or huge names, cost no more than the file's size", "[doctor][glibc][security]") {
  // Hand-made files (tests/fuzz/regressions/elf_version_needs/): 100 version-needed entries that
  // share one chain of 100 auxiliary entries (10000 needs from 3.4 KB: the old reader returned them
  // all, and a bigger file of the same shape grows as the square of its size); one name of 3000 bytes.
  const std::string dir = std::string(GPUDIRECT_FIXTURE_DIR) + "/../fuzz/regressions/elf_version_needs/";
  CHECK_THROWS_WITH(elf_version_needs(dir + "overlapping-entries"),
                    Catch::EndsWith("malformed ELF file: more version entries than the file has room for (entries overlap)"));
  CHECK_THROWS_WITH(elf_version_needs(dir + "long-name"), Catch::EndsWith("malformed ELF file: a version name is longer than 256 bytes"));
  // Real files are read as before: the seeds of the fuzz corpus, 32 and 64 bit, both byte orders.
  const std::vector<VersionNeed> expected{{"libc.so.6", "GLIBC_2.2.5"}, {"libc.so.6", "GLIBC_2.34"}, {"libm.so.6", "GLIBC_2.29"}};
  const std::string seeds = std::string(GPUDIRECT_FIXTURE_DIR) + "/../fuzz/corpus/elf_version_needs/";
  for (const char* seed : {"minimal_32_le.so", "minimal_32_be.so", "minimal_64_le.so", "minimal_64_be.so", "extended_count_64_le.so"}) {
    INFO(seed);
    CHECK(elf_version_needs(seeds + seed) == expected);
  }
}

TEST_CASE("glibc releases of version names", "[doctor][glibc]") {
  CHECK(glibc_release("GLIBC_2.2.5") == std::vector<int>{2, 2, 5});
  CHECK(glibc_release("GLIBC_2.32") == std::vector<int>{2, 32});
  CHECK(glibc_release("GLIBC_ABI_DT_RELR") == std::vector<int>{2, 36});
  CHECK(glibc_release("GLIBC_PRIVATE").empty());
  CHECK(glibc_release("GCC_3.0").empty());
  CHECK(glibc_release("GLIBC_2.x").empty());
}

TEST_CASE("glibc check: a plugin that needs a newer glibc than the container's names both and the fix", "[doctor][glibc]") {
  // gIB's plugin in an image with glibc 2.31 (AI-Hypercomputer/gpu-recipes#5).
  const std::vector<VersionNeed> needs{{"libc.so.6", "GLIBC_2.2.5"},
                                       {"libm.so.6", "GLIBC_2.29"},
                                       {"libc.so.6", "GLIBC_2.32"},
                                       {"libc.so.6", "GLIBC_PRIVATE"},
                                       {"libstdc++.so.6", "GLIBCXX_3.4.29"}};
  const GlibcCheck old = check_glibc_needs("/usr/local/gib/lib64/libnccl-net.so", needs, "2.31", "the container's");
  CHECK(old.needed == "GLIBC_2.32");
  CHECK(old.from == "libc.so.6");
  CHECK(old.problem ==
        "the NCCL net plugin /usr/local/gib/lib64/libnccl-net.so needs GLIBC_2.32 (from libc.so.6, its ELF version needs), but the "
        "container's glibc is 2.31: the loader refuses the plugin (version `GLIBC_2.32' not found) and NCCL reports its network as "
        "not found; run an image with glibc 2.32 or newer, or install a build of the plugin for glibc 2.31 or older");
  CHECK(check_glibc_needs("x.so", needs, "2.32", "the container's").problem.empty());
  CHECK(check_glibc_needs("x.so", needs, "2.35", "the container's").problem.empty());
  CHECK(check_glibc_needs("x.so", needs, "2.4", "this node's").problem.find("this node's glibc is 2.4") != std::string::npos);
  // 2.9 is older than 2.29: releases compare by number, not as text.
  CHECK_FALSE(check_glibc_needs("x.so", {{"libc.so.6", "GLIBC_2.29"}}, "2.9", "this node's").problem.empty());
  // Packed relocations need glibc 2.36.
  const GlibcCheck relr = check_glibc_needs("x.so", {{"libc.so.6", "GLIBC_ABI_DT_RELR"}}, "2.35", "the container's");
  CHECK_THAT(relr.problem, Catch::Contains("needs GLIBC_ABI_DT_RELR") && Catch::Contains("run an image with glibc 2.36 or newer"));
  CHECK(check_glibc_needs("x.so", {{"libc.so.6", "GLIBC_PRIVATE"}}, "2.17", "the container's").needed.empty());
  CHECK(check_glibc_needs("x.so", {}, "2.17", "the container's").problem.empty());
}

TEST_CASE("glibc check: the stand-in against this process's glibc, and the loader's own refusal", "[doctor][glibc]") {
  const std::string have = ::gnu_get_libc_version();
  const GlibcCheck check = check_glibc_needs(kStandin, elf_version_needs(kStandin), have, "the container's");
  CHECK(check.problem == "the NCCL net plugin " + kStandin + " needs GLIBC_9.99 (from libc.so.6, its ELF version needs), but the " +
                             "container's glibc is " + have + ": the loader refuses the plugin (version `GLIBC_9.99' not found) " +
                             "and NCCL reports its network as not found; run an image with glibc 9.99 or newer, or install a build " +
                             "of the plugin for glibc " + have + " or older");
  // What the doctor reads matches what the loader does: it does refuse the stand-in for that version.
  const auto loads = check_net_plugin({{"NCCL_NET", "FasTrak"}, {"LD_LIBRARY_PATH", kStandinDir}});
  REQUIRE(loads);
  CHECK(loads->library == kStandin);
  CHECK_THAT(loads->problem, Catch::Contains("GLIBC_9.99"));
}
