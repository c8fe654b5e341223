#include "core/reference_cache.hpp"

#include <mutex>
#include <utility>

namespace attnprof {

namespace {

struct Kept {
  std::mutex mutex;
  std::string key;
  std::shared_ptr<const ForwardRefs> refs;
  int64_t hits = 0;
};

Kept& kept() {
  static Kept k;
  return k;
}

}  // namespace

int64_t ForwardRefs::bytes() const {
  int64_t n = 0;
  for (const auto& run : runs)
    for (const BlockRef& b : run) n += int64_t(b.o.size() + b.lse.size() + b.floor.size());
  return n * int64_t(sizeof(double));
}

std::shared_ptr<const ForwardRefs> find_forward_refs(const std::string& key) {
  Kept& k = kept();
  const std::lock_guard<std::mutex> lock(k.mutex);
  if (k.refs == nullptr || k.key != key) return nullptr;
  ++k.hits;
  return k.refs;
}

void keep_forward_refs(const std::string& key, std::shared_ptr<const ForwardRefs> refs) {
  Kept& k = kept();
  const std::lock_guard<std::mutex> lock(k.mutex);
  if (refs == nullptr || refs->bytes() > kReferenceCacheBytes) return;
  k.key = key;
  k.refs = std::move(refs);
}

int64_t forward_refs_hits() {
  Kept& k = kept();
  const std::lock_guard<std::mutex> lock(k.mutex);
  return k.hits;
}

}  // namespace attnprof
