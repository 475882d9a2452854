// fuzz_model: parsim model JSON and Hugging Face config.json, through the same path as `--model FILE` (file reading,
// strict JSON, schema, validation), then the exact parameter counts and FLOPs of what was accepted.
#include "fuzz_common.hpp"
#include "models/model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace parsim;
  const std::string path = fuzz::scratch_file("model.json", fuzz::bytes(data, size));
  fuzz::guarded([&] {
    const ModelSpec m = resolve_model(path);
    // An accepted model is valid, and its counts are exact and positive (validate_model bounds them below 1e15).
    PARSIM_FUZZ_CHECK(m.layers > 0 && m.hidden > 0 && m.heads > 0 && m.kv_heads > 0 && m.head_dim > 0, m.name);
    const ParamCounts c = count_params(m);
    PARSIM_FUZZ_CHECK(c.total > 0, m.name);
    for (const int tp : {1, 2, 8}) {
      PARSIM_FUZZ_CHECK(padded_vocab(m.vocab, tp) >= m.vocab, m.name);
      PARSIM_FUZZ_CHECK(fuzz::finite_nonneg(layer_params_per_tp_rank(m, tp)), m.name);
    }
    const std::int64_t s = std::min<std::int64_t>(m.seq_len, 1 << 20);
    PARSIM_FUZZ_CHECK(fuzz::finite_nonneg(model_flops(m, 1, s)), m.name);
    PARSIM_FUZZ_CHECK(fuzz::finite_nonneg(hardware_flops(m, 1, s, Recompute::Full)), m.name);
  });
  return 0;
}
