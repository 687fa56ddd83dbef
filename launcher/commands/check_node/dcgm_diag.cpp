#include "check_node/dcgm_diag.hpp"

#include "child_process.hpp"

#include "gpudirect/text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace gpudirect::launcher::check_node {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The diagnostic's object, under the key DCGM releases have used.
const nlohmann::json* diagnostic(const nlohmann::json& json) {
  for (const char* key : {"DCGM Diagnostic", "DCGM GPU Diagnostic"})
    if (json.is_object() && json.contains(key) && json[key].is_object()) return &json[key];
  return nullptr;
}

std::string text_of(const nlohmann::json& result) {
  for (const char* key : {"warnings", "info"}) {
    if (!result.contains(key)) continue;
    const auto& value = result[key];
    if (value.is_string()) return value.get<std::string>();
    if (value.is_array() && !value.empty()) {
      const auto& first = value.front();
      if (first.is_string()) return first.get<std::string>();
      if (first.is_object() && first.contains("warning") && first["warning"].is_string()) return first["warning"].get<std::string>();
    }
  }
  return "";
}

}  // namespace

std::vector<Finding> judge_dcgm_diag(int exit_code, const std::string& output) {
  std::vector<Finding> out;
  if (exit_code == 127)
    return {{Severity::warn, Fault::configuration, "dcgm_diag", "dcgmi diag -r 1", "not run:", "dcgmi not found", "DCGM installed",
             "install DCGM (datacenter-gpu-manager) and start nv-hostengine, or leave out --dcgm-diag"}};
  const auto json = nlohmann::json::parse(output.substr(std::min(output.size(), output.find('{'))), nullptr, false);
  const nlohmann::json* diag = json.is_discarded() ? nullptr : diagnostic(json);
  if (diag && diag->contains("test_categories") && (*diag)["test_categories"].is_array())
    for (const auto& category : (*diag)["test_categories"]) {
      const std::string name = category.value("category", "");
      if (!category.contains("tests") || !category["tests"].is_array()) continue;
      for (const auto& test : category["tests"]) {
        if (!test.contains("results") || !test["results"].is_array()) continue;
        for (const auto& result : test["results"]) {
          if (!result.is_object() || lower(result.value("status", "")) != "fail") continue;
          std::string gpu;
          if (result.contains("gpu_id"))
            gpu = " on GPU " + (result["gpu_id"].is_string() ? result["gpu_id"].get<std::string>() : result["gpu_id"].dump());
          const std::string detail = text_of(result);
          out.push_back({Severity::fail, lower(name) == "deployment" ? Fault::configuration : Fault::gpu_hardware, "dcgm_diag",
                         "dcgmi diag -r 1", name + " test '" + test.value("name", "?") + "' failed" + gpu,
                         detail.empty() ? "" : "(" + quote_bounded(detail, 160) + ")", "pass",
                         "see dcgmi diag -r 1 on the node; a GPU that fails it again needs a reset or repair"});
        }
      }
    }
  if (out.empty() && exit_code != 0)
    out.push_back({Severity::fail, Fault::gpu_hardware, "dcgm_diag", "dcgmi diag -r 1", "exit code", std::to_string(exit_code), "0",
                   "run dcgmi diag -r 1 on the node: " + (diag ? std::string("no failing test in its JSON") : quote_bounded(output, 120))});
  return out;
}

std::vector<Finding> run_dcgm_diag(const std::string& program) {
  const auto [status, output] = run_capture({program, "diag", "-r", "1", "-j"}, 600);
  return judge_dcgm_diag(status, output);
}

}  // namespace gpudirect::launcher::check_node
