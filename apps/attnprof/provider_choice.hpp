// Which providers a run, tune or trace uses, and which of them can run here: one rule for every
// subcommand and for `attnprof list`. A provider named exactly (`--providers cudnn.sdpa`) that
// cannot run here is a request that cannot be met: refused before any work, with the reason
// `attnprof list` gives. One matched only by a glob (`--providers 'cpu.*,cuda.*'`) is left out,
// and what was left out is said in one line; a selection left with nothing that can run is
// refused.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "attnprof/device.hpp"
#include "attnprof/provider.hpp"
#include "attnprof/spec.hpp"
#include "attnprof/sweep.hpp"

namespace attnprof::cli {

// Whether this process's run can use a CUDA engine, and why not.
struct RunDevices {
  bool cuda = false;
  std::string cuda_reason;  // why not, when !cuda
  Device device;            // the device the run is on (what the default set is chosen for)
};

// Why `p` cannot run in a run on `devices` ("" when it can): its own availability first (built,
// library loaded), then its device's.
std::string cannot_run_here(const Provider& p, const RunDevices& devices);

// The providers of a run: those `patterns` names (checked as above), else (no patterns, or
// "default") the default set of the run's device for `specs` (registry.hpp default_set: the
// eligible providers that can run a point of them; those that can run none are named once on
// stderr) and the providers the --py-provider files added. `python_unavailable`
// (register_python_providers' answer) is named when a pattern matches nothing because the Python
// providers could not load. Throws std::invalid_argument.
std::vector<Provider*> chosen_providers(const std::string& patterns, const RunDevices& devices,
                                        const std::string& python_unavailable = "",
                                        std::span<const Spec> specs = {});

// Each `--set PROVIDER.NAME=V1,V2` checked against the settings the provider declares
// (ProviderTraits::settings), as the values to sweep by provider and setting (a later --set of a
// setting replaces an earlier one). A provider the run does not use is refused (the setting
// would be recorded nowhere and change nothing). Throws std::invalid_argument.
SettingsByProvider settings_of_run(const std::vector<std::string>& settings,
                                   const std::vector<Provider*>& providers);

}  // namespace attnprof::cli
