// A network profile file's text: parsed, then rendered with typical node inputs and applied; its
// mounts rendered and written in pyxis's and enroot's forms.
#include "fuzz_input.hpp"

#include "gpudirect/container_mounts.hpp"
#include "gpudirect/network_profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto profile = gpudirect::parse_profile(gpudirect::fuzz::as_text(data, size), "fuzz", "fuzz.conf");
    gpudirect::ProfileInputs inputs;
    for (const auto& name : gpudirect::known_placeholders()) inputs[name] = "value-of-" + name;
    for (const auto& action : gpudirect::render(profile, inputs)) {
      (void)gpudirect::apply_env_action(action, std::nullopt);
      (void)gpudirect::apply_env_action(action, std::string("/usr/lib"));
    }
    inputs["LIB_DIR"] = "/var/lib/tcpxo/lib64";
    inputs["SLURM_JOB_ID"] = "4242";
    const auto mounts = gpudirect::render_mounts(profile, inputs);
    (void)gpudirect::pyxis_container_mounts(mounts);
    (void)gpudirect::enroot_fstab(mounts);
  } catch (const gpudirect::ProfileError&) {
  }
  return 0;
}
