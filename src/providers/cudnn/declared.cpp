// The declared traits of the cuDNN providers (traits.hpp), compiled in every build: sdpa.cpp and
// the registry's "not built" entries read the same facts. The loaded cuDNN's version is added at
// run time by the provider.
#include "providers/factories.hpp"

namespace attnprof {

ProviderTraits cudnn_sdpa_traits(bool inference) {
  ProviderTraits t;
  t.device = DeviceKind::cuda;
  t.family = Family::fused;
  t.fused = true;
  t.library = "cuDNN";
  t.in_default_set = true;
  t.paged_kv = true;  // page tables (sdpa.cpp)
  t.fp8 = true;       // the fp8 forward and backward graphs (sdpa.cpp), Hopper and newer
  t.softcap = true;   // a score modifier (sdpa.cpp): with no mask or top-left causal only
  t.sinks = true;     // set_sink_token (cuDNN 9.13 and newer)
  t.ragged = true;    // the padding mask with the harness's lengths (sdpa.cpp)
  if (inference) {
    t.name = "cudnn.sdpa.infer";
    t.description =
        "cuDNN 9 fused SDPA (flash-attention engines) via the cuDNN frontend graph API; "
        "inference forward only (no log-sum-exp)";
    t.variant_of = "cudnn.sdpa";
  } else {
    t.name = "cudnn.sdpa";
    t.description =
        "cuDNN 9 fused SDPA (flash-attention engines) via the cuDNN frontend graph API; forward "
        "writes the log-sum-exp (training forward), backward";
    t.backward = true;
    t.writes_lse = true;
  }
  return t;
}

}  // namespace attnprof
