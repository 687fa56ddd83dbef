// A directory standing in for a container's root file system, made under the temp dir and removed
// when the test ends: the doctor's container checks read their markers and mounts from it.
#pragma once

#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

struct FakeRoot {
  std::filesystem::path path;
  FakeRoot() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gpudirect-container-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~FakeRoot() { std::filesystem::remove_all(path); }
  FakeRoot(const FakeRoot&) = delete;
  FakeRoot& operator=(const FakeRoot&) = delete;
  void add_file(const std::string& relative, const std::string& text = "") {
    std::filesystem::create_directories((path / relative).parent_path());
    std::ofstream(path / relative) << text;
  }
  void add_dir(const std::string& relative) { std::filesystem::create_directories(path / relative); }
};
