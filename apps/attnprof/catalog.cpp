#include "catalog.hpp"

#include <memory>

#include "attnprof/engine.hpp"
#include "attnprof/registry.hpp"

namespace attnprof::cli {

namespace {

// A built CUDA provider on a machine without a driver is unavailable for the engine's reason.
Availability availability_here(const Provider& p, const Engine* cuda) {
  Availability a = p.availability();
  if (!a.available || p.device_kind() == DeviceKind::cpu) return a;
  if (cuda == nullptr) return {false, "no CUDA engine in this build"};
  return cuda->availability();
}

}  // namespace

Catalog provider_catalog(const PythonCliOptions& python) {
  Catalog c;
  c.python_unavailable = register_python_providers(python, true, "");
  std::unique_ptr<Engine> cuda = make_cuda_engine(0);
  for (const auto& p : all_providers())
    c.providers.emplace_back(p.get(), availability_here(*p, cuda.get()));
  return c;
}

}  // namespace attnprof::cli
