#include "doctor/container_env_check.hpp"

#include "doctor/container_check.hpp"

#include <filesystem>

namespace gpudirect::launcher {
namespace {

bool has(const std::map<std::string, std::string>& env, const std::string& name) {
  const auto it = env.find(name);
  return it != env.end() && !it->second.empty();
}

std::string under(const std::string& root, const std::string& path) {
  return root.empty() || root == "/" ? path : (root.back() == '/' ? root.substr(0, root.size() - 1) : root) + path;
}

std::string quoted(const std::string& value) { return "'" + value + "'"; }

}  // namespace

ContainerRuntime container_runtime(const std::string& root, const std::map<std::string, std::string>& env) {
  std::error_code ignored;
  if (has(env, "APPTAINER_CONTAINER") || has(env, "SINGULARITY_CONTAINER") ||
      std::filesystem::exists(under(root, "/.singularity.d"), ignored))
    return ContainerRuntime::apptainer;
  const std::string marker = container_marker(root);
  if (marker == "/.enroot" || marker == "/etc/rc of an enroot image") return ContainerRuntime::enroot;
  // enroot's runtime locks every container it starts through a file /.lock at its root, and finds
  // its own containers by it (src/runtime.sh: lock_file, runtime::list); pyxis rewrites the image's
  // /etc/rc.local, so under pyxis this is what is left of enroot.
  if (std::filesystem::is_regular_file(under(root, "/.lock"), ignored)) return ContainerRuntime::enroot;
  return ContainerRuntime::other;
}

std::vector<EnvMismatch> env_mismatches(const std::vector<EnvAction>& actions, const std::map<std::string, std::string>& env) {
  std::vector<EnvMismatch> mismatches;
  for (const EnvAction& action : actions) {
    const auto it = env.find(action.name);
    const std::optional<std::string> current = it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
    if (auto expected = apply_env_action(action, current); expected && expected != current)
      mismatches.push_back({action.name, current, *expected});
  }
  return mismatches;
}

std::string describe_env_mismatch(const EnvMismatch& mismatch, ContainerRuntime runtime, const std::string& mode,
                                  const std::string& reason) {
  const std::string& name = mismatch.name;
  std::string line = "in a container (" + reason + "): ";
  if (mismatch.value)
    line += name + " is " + quoted(*mismatch.value) + " there, but --gpu-direct=" + mode + " sets " + quoted(mismatch.expected) + ": ";
  else
    line += name + ", which --gpu-direct=" + mode + " sets to " + quoted(mismatch.expected) + ", did not arrive in it: ";
  switch (runtime) {
    case ContainerRuntime::enroot:
      return line +
             (mismatch.value ? "the image's own value won (pyxis gives variables the image sets precedence over the task's); "
                             : "pyxis passed the task's value to no process of the container; ") +
             "install gpudirect-slurm's enroot hook on the node (it makes the mode's values win, docs/containers.md), or pass srun "
             "--container-env=" +
             name;
    case ContainerRuntime::apptainer:
      return line +
             (mismatch.value ? "the image's own value won (Apptainer gives the image's environment precedence over the host's); "
                             : "Apptainer passed no host value (--cleanenv and --containall drop the job's environment); ") +
             "pass apptainer exec --env " + name + "=" + quoted(mismatch.expected) + " (or export APPTAINERENV_" + name +
             " before it), or run it with gpudirect-launch exec --mode " + mode + " -- inside the container";
    case ContainerRuntime::other:
      break;
  }
  return line + (mismatch.value ? "the image's own value won over the job's; " : "the runtime did not pass the job's value; ") +
         "pass the job's value into the container with the runtime's environment option";
}

}  // namespace gpudirect::launcher
