// The cuDNN library this process runs, for `attnprof list`, the provider description and the
// environment fingerprint. Light: includes only cudnn.h's version macros in its .cpp.
#pragma once

#include <string>

namespace attnprof::cudnn {

// Runtime version (cudnnGetVersion) as "9.19.0".
std::string cudnn_runtime_version();
// The version of the headers this binary was compiled against (CUDNN_VERSION), as "9.19.0".
std::string cudnn_compiled_version();
// "9.19.0" when runtime and headers agree, else "9.14.0 (built against 9.19.0)". The GPU
// machine has two cuDNNs on it (system 9.14, the torch venv's 9.19): this says which one loaded.
std::string cudnn_version_string();

}  // namespace attnprof::cudnn
