#include <dlfcn.h>

#include <array>
#include <catch2/catch.hpp>
#include <string_view>

#include "gpudirect/shared_library.hpp"

using namespace gpudirect;

TEST_CASE("library_names puts the build's soname first and lists each name once", "[shared_library]") {
  constexpr std::array<std::string_view, 3> fallbacks{"libxml2.so.16", "", "libxml2.so.2"};
  CHECK(library_names("libxml2.so.2", fallbacks) == std::vector<std::string>{"libxml2.so.2", "libxml2.so.16"});
  CHECK(library_names("", fallbacks) == std::vector<std::string>{"libxml2.so.16", "libxml2.so.2"});
}

TEST_CASE("the soname CMake read is the libxml2 these tests are linked to", "[shared_library]") {
  // RTLD_NOLOAD: only a library already in the process, so the name must be the one the linker recorded.
  INFO(GPUDIRECT_LIBXML2_SONAME);
  void* handle = dlopen(GPUDIRECT_LIBXML2_SONAME, RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(handle != nullptr);
  dlclose(handle);
}

TEST_CASE("open_first_library skips names that do not load", "[shared_library]") {
  const auto opened = open_first_library({"libgpudirect-absent.so.1", GPUDIRECT_LIBXML2_SONAME}, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(opened.handle != nullptr);
  CHECK(opened.name == GPUDIRECT_LIBXML2_SONAME);
  CHECK(opened.error.empty());
  CHECK(dlsym(opened.handle, "xmlNewParserCtxt") != nullptr);
  dlclose(opened.handle);
}

TEST_CASE("open_first_library names every library it tried and why", "[shared_library]") {
  const auto opened = open_first_library({"libgpudirect-absent.so.1", "libgpudirect-absent.so.16"}, RTLD_NOW);
  CHECK(opened.handle == nullptr);
  CHECK(opened.error.starts_with("cannot load any of libgpudirect-absent.so.1, libgpudirect-absent.so.16 ("));
  CHECK_THAT(opened.error, Catch::Contains("libgpudirect-absent.so.16: cannot open shared object file"));
  CHECK(open_first_library({}, RTLD_NOW).error == "no library name to load");
}
