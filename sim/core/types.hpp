// parsim — small vocabulary types shared by every layer.
//
// Units: internally every quantity is SI in a double — seconds, bytes, FLOPs, bytes per second, FLOP/s. Names carry
// the unit where it is not SI-obvious (`_s`, `_bytes`, `_Bps` = bytes/s, `_flops`). Conversions from the user's units
// (GB/s, Gb/s, GiB, µs, TFLOP/s) happen only at the parse boundary (the *_io.cpp files).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace parsim {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kGB = 1e9;
constexpr double kMiB = 1024.0 * 1024.0;

enum class Precision { BF16, FP16, FP8, FP32 };
// Op: torchtitan's per-op selective activation checkpointing (activation_checkpoint.mode "selective",
// selective_ac_option "op"; the PyTorch stack): each block is checkpointed with a policy that saves the outputs of
// aten.mm — except every second one of the block —, of scaled_dot_product_attention and of the TP reduce-scatters,
// and recomputes everything else (torchtitan/models/llama3/parallelize_llama.py _save_list / _custom_policy).
enum class Recompute { None, Selective, Full, Op };

// Megatron-Core's selective recompute by module (--recompute-granularity selective --recompute-modules …;
// megatron/core/transformer/transformer_config.py `recompute_modules`, default ["core_attn"]). A bit set; only read
// when the recompute is Selective. What each module recomputes and frees is documented where it is priced
// (sim/step/costs/layer.cpp, models/activations.cpp, models/flops.cpp).
enum class RecomputeModule : unsigned {
  CoreAttn = 1u,       // the attention core (QKᵀ, softmax, ·V)
  MoeAct = 2u,         // the routed experts' activation function (output discarded, FC1 output kept)
  LayerNorm = 4u,      // the norms that are separate modules (output discarded, input kept)
  MlaUpProj = 8u,      // MLA's q/kv up-projections and RoPE (outputs Q, K, V discarded, latents kept)
  Mlp = 16u,           // a dense layer's whole MLP (checkpointed; input kept)
  Moe = 32u,           // an MoE layer's whole MoE block: router, dispatch, experts, combine (checkpointed)
  SharedExperts = 64u  // an MoE layer's shared experts (checkpointed)
};
struct RecomputeModules {
  unsigned bits = static_cast<unsigned>(RecomputeModule::CoreAttn);
  bool has(RecomputeModule x) const { return (bits & static_cast<unsigned>(x)) != 0; }
  bool operator==(const RecomputeModules& o) const { return bits == o.bits; }
  bool operator!=(const RecomputeModules& o) const { return bits != o.bits; }
};
// Every module in Megatron's order: the names the option takes.
struct RecomputeModuleName {
  RecomputeModule module;
  const char* name;
};
inline constexpr RecomputeModuleName kRecomputeModuleNames[] = {
    {RecomputeModule::CoreAttn, "core_attn"},   {RecomputeModule::MoeAct, "moe_act"},
    {RecomputeModule::LayerNorm, "layernorm"},  {RecomputeModule::MlaUpProj, "mla_up_proj"},
    {RecomputeModule::Mlp, "mlp"},              {RecomputeModule::Moe, "moe"},
    {RecomputeModule::SharedExperts, "shared_experts"}};

// Bytes of one element of the matrix-multiply inputs at this precision (fp8 GEMMs read 1-byte operands).
double element_bytes(Precision p);
// Bytes of one stored activation element: 2 for the 16-bit and fp8 modes (fp8 recipes keep bf16 activations
// between layers), 4 for fp32.
double activation_element_bytes(Precision p);

std::string to_string(Precision p);
std::string to_string(Recompute r);
// Case-insensitive parsers; throw InputError naming the value and the valid choices.
Precision parse_precision(const std::string& s);
Recompute parse_recompute(const std::string& s);
// "core_attn,moe_act" (Megatron's order, comma-separated); the parser takes commas or spaces, repeated names once.
std::string to_string(RecomputeModules r);
RecomputeModules parse_recompute_modules(const std::string& s);

}  // namespace parsim
