// A provider whose every operation is a call into the Python worker (c_api.h's callback): what
// the C++ instrument runs inside `python3 -m attnprof._worker`. Tensors, timing and verification
// stay the instrument's; the callback only prepares, launches and publishes.
#pragma once

#include <memory>

#include "attnprof/provider.hpp"
#include "python/c_api.h"
#include "python/python_info.hpp"

namespace attnprof::python {

std::unique_ptr<Provider> make_callback_provider(int64_t index, ProviderInfo info,
                                                 attnprof_callback callback);

}  // namespace attnprof::python
