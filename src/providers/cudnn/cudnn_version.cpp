#include "providers/cudnn/cudnn_version.hpp"

#include <cudnn.h>

#include <cstddef>
#include <string>

namespace attnprof::cudnn {
namespace {

// cuDNN 9 encodes versions as major * 10000 + minor * 100 + patch.
std::string format_version(std::size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

}  // namespace

std::string cudnn_runtime_version() {
  return format_version(cudnnGetVersion());
}

std::string cudnn_compiled_version() {
  return format_version(CUDNN_VERSION);
}

std::string cudnn_version_string() {
  std::string runtime = cudnn_runtime_version();
  std::string compiled = cudnn_compiled_version();
  if (runtime == compiled) return runtime;
  return runtime + " (built against " + compiled + ")";
}

}  // namespace attnprof::cudnn
