#include "attnprof/io.hpp"

#include <stdexcept>

namespace attnprof {

std::string_view to_string(TensorRole r) {
  switch (r) {
    case TensorRole::q:
      return "q";
    case TensorRole::k:
      return "k";
    case TensorRole::v:
      return "v";
    case TensorRole::d_o:
      return "d_o";
    case TensorRole::o:
      return "o";
    case TensorRole::lse:
      return "lse";
    case TensorRole::dq:
      return "dq";
    case TensorRole::dk:
      return "dk";
    case TensorRole::dv:
      return "dv";
    case TensorRole::sink:
      return "sink";
  }
  return "?";
}

TensorView& Io::operator[](TensorRole r) {
  return const_cast<TensorView&>(static_cast<const Io&>(*this)[r]);
}

const TensorView& Io::operator[](TensorRole r) const {
  switch (r) {
    case TensorRole::q:
      return q;
    case TensorRole::k:
      return k;
    case TensorRole::v:
      return v;
    case TensorRole::d_o:
      return d_o;
    case TensorRole::o:
      return o;
    case TensorRole::lse:
      return lse;
    case TensorRole::dq:
      return dq;
    case TensorRole::dk:
      return dk;
    case TensorRole::dv:
      return dv;
    case TensorRole::sink:
      return sink;
  }
  throw std::logic_error("Io: unknown tensor role");
}

namespace {

TensorView view(const Spec& s, DType storage, int64_t heads, int64_t len, int64_t dim) {
  TensorView t;
  t.storage = storage;
  t.layout = s.layout;
  t.batch = s.batch;
  t.heads = heads;
  t.len = len;
  t.dim = dim;
  return t;
}

}  // namespace

Io io_layout(const Spec& s, DType storage, bool lse) {
  Io io;
  io.q = view(s, storage, s.q_heads, s.q_len, s.head_dim);
  io.k = view(s, storage, s.kv_heads, s.kv_len, s.head_dim);
  io.v = view(s, storage, s.kv_heads, s.kv_len, s.dv());
  io.k.page_size = io.v.page_size = s.page_size;
  io.o = view(s, storage, s.q_heads, s.q_len, s.dv());
  if (lse) {
    io.lse = view(s, DType::fp32, s.q_heads, s.q_len, 1);
    io.lse.layout = Layout::bhsd;
  }
  if (s.sinks) {
    io.sink = view(s, DType::fp32, s.q_heads, 1, 1);
    io.sink.batch = 1;
    io.sink.layout = Layout::bhsd;
  }
  if (s.mode != Mode::fwd) {
    io.d_o = view(s, storage, s.q_heads, s.q_len, s.dv());
    io.dq = view(s, storage, s.q_heads, s.q_len, s.head_dim);
    io.dk = view(s, storage, s.kv_heads, s.kv_len, s.head_dim);
    io.dv = view(s, storage, s.kv_heads, s.kv_len, s.dv());
  }
  return io;
}

namespace {

// Roles by shape (data may still be null: io_layout's result has no data yet).
bool has(const TensorView& t) {
  return t.elems() > 0;
}

}  // namespace

std::vector<TensorRole> launch_outputs(const Spec& spec, const Io& io) {
  std::vector<TensorRole> out;
  if (spec.mode != Mode::bwd) {
    out.push_back(TensorRole::o);
    if (has(io.lse)) out.push_back(TensorRole::lse);
  }
  if (spec.mode != Mode::fwd) {
    for (TensorRole r : {TensorRole::dq, TensorRole::dk, TensorRole::dv}) {
      if (has(io[r])) out.push_back(r);
    }
  }
  return out;
}

std::vector<TensorRole> launch_inputs(const Spec& spec, const Io& io) {
  std::vector<TensorRole> in = {TensorRole::q, TensorRole::k, TensorRole::v};
  if (has(io.sink)) in.push_back(TensorRole::sink);
  if (spec.mode != Mode::fwd && has(io.d_o)) in.push_back(TensorRole::d_o);
  if (spec.mode == Mode::bwd) {
    in.push_back(TensorRole::o);
    if (has(io.lse)) in.push_back(TensorRole::lse);
  }
  return in;
}

std::vector<float>* HostOutputs::slot(TensorRole r) {
  switch (r) {
    case TensorRole::o:
      return &o;
    case TensorRole::lse:
      return &lse;
    case TensorRole::dq:
      return &dq;
    case TensorRole::dk:
      return &dk;
    case TensorRole::dv:
      return &dv;
    default:
      return nullptr;
  }
}

const std::vector<float>* HostOutputs::slot(TensorRole r) const {
  return const_cast<HostOutputs*>(this)->slot(r);
}

const float* HostOutputs::row(TensorRole r, int64_t first) const {
  const std::vector<float>* v = slot(r);
  if (!v) return nullptr;
  if (!partial()) {
    return first >= 0 && static_cast<size_t>(first) < v->size() ? v->data() + first : nullptr;
  }
  const auto rows = held.find(r);
  if (rows == held.end()) return nullptr;
  const auto at = rows->second.find(first);
  return at == rows->second.end() ? nullptr : v->data() + at->second;
}

int64_t tensor_bytes(const Io& io) {
  int64_t total = 0;
  for (TensorRole r : kTensorRoles) {
    total += io[r].bytes();  // a layout's too, before it has memory (the estimate of a point)
  }
  return total;
}

}  // namespace attnprof
