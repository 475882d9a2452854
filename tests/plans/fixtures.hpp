// Test fixtures for plans/: models and hardware built as plain structs (published shapes; sources inline), so the
// plan tests do not depend on the preset tables.
#pragma once
#include "plans/plan.hpp"
#include "sim/core/error.hpp"

#include <doctest/doctest.h>

#include <string>

namespace parsim::test {

// Llama-2-7B, Touvron et al. 2023 Table/HF config: 32 layers, h 4096, 32 heads (MHA), FFN 11008, V 32000, s 4096.
inline ModelSpec llama2_7b() {
  ModelSpec m;
  m.name = "llama2-7b";
  m.layers = 32, m.hidden = 4096, m.heads = 32, m.kv_heads = 32, m.ffn_hidden = 11008, m.vocab = 32000;
  m.seq_len = 4096, m.head_dim = 128;
  return m;
}
// Llama-3-70B, HF config: 80 layers, h 8192, 64 heads, 8 KV heads, FFN 28672, V 128256, s 8192.
inline ModelSpec llama3_70b() {
  ModelSpec m;
  m.name = "llama3-70b";
  m.layers = 80, m.hidden = 8192, m.heads = 64, m.kv_heads = 8, m.ffn_hidden = 28672, m.vocab = 128256;
  m.seq_len = 8192, m.head_dim = 128;
  return m;
}
// Llama-3.1-405B, HF config: 126 layers, h 16384, 128 heads, 8 KV heads, FFN 53248, V 128256, s 8192.
inline ModelSpec llama3_405b() {
  ModelSpec m;
  m.name = "llama3-405b";
  m.layers = 126, m.hidden = 16384, m.heads = 128, m.kv_heads = 8, m.ffn_hidden = 53248, m.vocab = 128256;
  m.seq_len = 8192, m.head_dim = 128;
  return m;
}
// Mixtral 8x7B (Jiang et al. 2024, HF config): 32 layers, h 4096, 32 heads, 8 KV heads, 8 experts, top-2,
// expert FFN 14336, V 32000, s 32768 (trained at 4096 here).
inline ModelSpec mixtral_8x7b() {
  ModelSpec m;
  m.name = "mixtral-8x7b";
  m.layers = 32, m.hidden = 4096, m.heads = 32, m.kv_heads = 8, m.ffn_hidden = 14336, m.vocab = 32000;
  m.seq_len = 4096, m.head_dim = 128;
  m.experts = 8, m.experts_per_token = 2, m.expert_ffn_hidden = 14336;
  return m;
}
// A DeepSeek-V3-sized MoE (DeepSeek-AI 2024, arXiv 2412.19437 §4.2): 61 layers, h 7168, 128 heads, 256 routed experts
// (top-8) of FFN 2048 plus 1 shared expert, V 129280. Attention is MLA there; here plain MHA shapes are enough for plans/.
inline ModelSpec deepseek_v3_like() {
  ModelSpec m;
  m.name = "deepseek-v3-like";
  m.layers = 61, m.hidden = 7168, m.heads = 128, m.kv_heads = 128, m.ffn_hidden = 18432, m.vocab = 129280;
  m.seq_len = 4096, m.head_dim = 128;
  m.experts = 256, m.experts_per_token = 8, m.expert_ffn_hidden = 2048, m.shared_experts = 1;
  return m;
}
// A made-up small model for hand-countable spaces.
inline ModelSpec tiny(int layers, int heads, int kv_heads) {
  ModelSpec m;
  m.name = "tiny";
  m.layers = layers, m.hidden = 64 * heads, m.heads = heads, m.kv_heads = kv_heads, m.ffn_hidden = 256 * heads;
  m.vocab = 1000, m.seq_len = 1024, m.head_dim = 64;
  return m;
}

// Only the fields plans/ reads: GPUs per node and whether fp8 exists. H100 SXM: 8 GPUs per DGX node, fp8 1,978.9
// TFLOP/s dense (NVIDIA H100 datasheet / Hopper whitepaper); A100: no fp8 tensor cores (A100 datasheet).
inline Hardware node_of(int gpus_per_node, bool fp8 = true) {
  Hardware hw;
  hw.name = fp8 ? "h100" : "a100";
  hw.gpu.name = hw.name;
  hw.gpu.peak_bf16 = 989.4e12;
  hw.gpu.peak_fp8 = fp8 ? 1978.9e12 : 0;
  hw.node.gpus_per_node = gpus_per_node;
  return hw;
}

inline TrainingConfig train(std::int64_t seq, std::int64_t gbs, std::int64_t mbs = 1) {
  TrainingConfig t;
  t.seq = seq, t.gbs = gbs, t.mbs = mbs;
  return t;
}

// The message of the InputError `f` throws, or "<no error>" (a doctest::String, so that doctest::Contains applies).
template <class F>
doctest::String error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace parsim::test
