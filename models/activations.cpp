// parsim models/ — activation memory per layer and micro-batch (Korthikanti et al. 2022, "Reducing Activation
// Recomputation in Large Transformer Models", §4 and Table 2), generalised as in domain-notes §3.
//
// Bytes kept from a layer's forward to its backward, per rank, for b sequences of s/c local tokens (CP divides every
// term by c; remote K/V chunks are transient, Megatron context_parallel.md). e = bytes per activation element (2 for
// bf16/fp16/fp8, 4 for fp32); dropout masks are 1 byte per element.
//   Hidden-sized tensors — replicated on the TP ranks, split ÷t only under SP (Korthikanti §4.2.2):
//     inputs of the norm_layers norms   norm_layers·e·sbh   (GPT: 4sbh)
//     QKV GEMM input (norm output)      e·sbh               (2sbh)
//     FFN-in GEMM input (norm output)   e·sbh               (2sbh)
//     two hidden-dropout masks          2·sbh if dropout    (2sbh)        → GPT total 10sbh, Korthikanti's "10"
//   TP-split tensors (a/t query heads, kv_r = max(g/t, 1) KV heads, f/t FFN columns per rank):
//     Q                                 e·sb·(a/t)·d        (2sbh/t)
//     K and V                           2·e·sb·kv_r·d       (4sbh/t)
//     O-proj input (attention output)   e·sb·(a/t)·d        (2sbh/t)
//     FFN                               gated: gate and up outputs + activation output 3·e·sb·f/t;
//                                       plain: activation input + FFN-out input 2·e·sb·f/t   (16sbh/t at f = 4h)
//                                                                         → GPT total 24sbh/t, Korthikanti's "24/t"
//   Attention core (÷t by heads):
//     flash (default): no s² tensor; the fp32 logsumexp per query row and head, 4·b·(a/t)·(s/c) bytes
//                      (domain-notes §3; FlashAttention stores O — counted above — and the logsumexp)
//     no flash: softmax output e·(a/t)·(s/c)·s·b, plus with dropout its 1-byte mask and the dropped-out
//               probabilities e·(a/t)·(s/c)·s·b                         → GPT: 5as²b/t, Korthikanti's "5as/(ht)"
//               (+ o.softmax_saved_extra per score where Megatron's softmax ran eager fp32 ops: the fp32 output
//               SoftmaxBackward keeps, sim/step/costs/layer.cpp megatron_softmax)
// Recompute: selective drops the attention core (Korthikanti §4.3 "selective"; with flash only the logsumexp);
// full keeps only the layer input e·sbh (÷t when the input is an SP shard) — Table 2's last row. Selective by
// module (Megatron-Core --recompute-modules): core_attn is the attention core above; layernorm, mla_up_proj, mlp,
// moe, moe_act and shared_experts free the tensors listed in layer_terms (Split::freed*), from Megatron-Core's
// checkpointing code.
// Llama style (RMSNorm, SwiGLU, no dropout, flash, bf16), t = c = 1, no recompute: norm inputs 4 + QKV in 2 + FFN in 2
// + Q 2 + K,V 4·g/a + O in 2 + FFN 6·f/h, in units of sbh, plus 4·b·a·s of logsumexp. Llama-2-7B (g = a,
// f/h = 2.6875): 32.125·sbh (domain-notes §3: ≈ 32.1).
//
// FP8 with Transformer Engine (o.fp8_gemm_inputs, the Megatron stack): a TE Linear / LayerNormLinear quantises its
// input to fp8 for the forward GEMM and saves that fp8 copy (1 B per element; on Hopper only its column-wise /
// transposed form) for the weight-gradient GEMM instead of the 16-bit input (TransformerEngine
// transformer_engine/pytorch/module/linear.py and layernorm_linear.py: `saved_inputmat` is the quantised input when
// fp8 is on; the input quantizer's `update_usage(rowwise_usage=False)` before saving). So the GEMM inputs that only a
// GEMM keeps — the two norm outputs (QKV, FFN-in), the FFN-out input (the activation's output), MLA's latents, the
// experts' inputs — cost 1 B; tensors other modules also save stay 16-bit: the norm inputs (the norm's backward), the
// fc1 output (saved by Megatron-Core's fused bias-SwiGLU / GeLU), Q, K, V and the attention output (saved by the
// attention kernel), to which the output projection adds its own 1-byte fp8 copy. Llama-2-7B: 32.1 → 28.4 sbh
// (norm outputs 4 → 2, FFN 6·2.6875 → 5·2.6875, + 1 for the projection's copy).
//
// Extensions (issue 10), same bookkeeping [D]:
//   parallel attention (GPT-NeoX, Falcon): both branches read the same layer input; stored hidden-sized tensors are
//     the input and the norm_layers norm outputs (1 + norm_layers instead of norm_layers + 2).
//   q/k norms (Qwen3, OLMo 2): the un-normalised Q and K are kept as the norms' inputs, e·(a/t + kv_r)·d more.
//   MLA (Megatron-Core multi_latent_attention.py): the latent norms' inputs e·(q_r + kv_r) on the SP shard; the
//     gathered latents, inputs of the up-projections, e·(q_r + kv_r) and the shared rope key e·r on every TP rank;
//     Q and K e·(a/t)·(n+r) each, V and the O-proj input e·(a/t)·v each; flash logsumexp as above.
//   MoE (Megatron-Core router.py, token_dispatcher.py, experts.py): on the SP shard the router's fp32 scores and the
//     1-byte routing map, (4 + 1)·E per token; the shared experts like a dense FFN of n·f_s; per routed pair R
//     (moe_routed_tokens: k × tokens, × imbalance on the busiest rank) the expert input e·h (fc1's wgrad), fc1's
//     outputs and the activation output (gated 3, plain 2)·e·f_e/etp, the expert output e·h (kept by the combine
//     for the routing-probability gradient) and the fp32 probability 4 bytes; with a clamped activation on the
//     TEGroupedMLP path the clamped concatenation e·2·f_e/etp more. LatentMoE: the routed pairs' input and output
//     are ℓ wide instead of h, and fc2_latent_proj keeps its ℓ-wide input on the SP shard (g_in·ℓ per token). The
//     dispatch send/receive buffers are transient: moe_dispatch_buffer_bytes, counted in the working bytes.
#include "models/model.hpp"
#include "sim/core/error.hpp"

#include <algorithm>

namespace parsim {
namespace {

struct Split {
  double hidden;  // hidden-sized tensors before the SP split (and other per-token tensors on the SP shard)
  double tp;      // tensors already split by TP
  double core;    // attention-core tensors
  double routed;  // MoE: tensors of the routed (token, expert) pairs on this rank
  double clamped;  // of which the clamped activation inputs' concatenation (activation_clamp, TEGroupedMLP path)
  // Selective recompute by module (o.recompute_modules beyond core_attn): what the recomputed modules no longer keep,
  // hidden-sized (÷t under SP like `hidden`) and the rest.
  double freed_hidden;
  double freed;
  // --recompute op (torchtitan's per-op checkpointing): what the block keeps, attention core included (a complete
  // total, not a term of the sum above).
  double op;
};

double sp_div(const ActivationOptions& o) { return o.sp ? o.tp : 1; }

void check(std::int64_t b, std::int64_t s, const ActivationOptions& o) {
  if (b < 1 || s < 1) fail("micro-batch size and sequence length must be positive");
  if (o.tp < 1 || o.cp < 1)  // (message built only on failure: this runs for every layer of every candidate)
    fail("TP and CP degrees must be at least 1, got tp " + std::to_string(o.tp) + ", cp " + std::to_string(o.cp));
}

// A Mamba-2 mixer's tensors kept for its backward, per token on one TP rank (heads and groups ÷t) — Megatron-Core's
// memory-efficient path (megatron/core/ssm/mamba_mixer.py _ssm_training @d98e8a64dd; state-spaces/mamba
// ssd_combined.py MambaSplitConv1dScanCombinedFn.forward @e9594ce1 saves zxbcdt and out_x and recomputes the conv
// output, dt, the chunk states and C·Bᵀ in its backward): the in_proj output zxbcdt e·W (W = 2·d_in + 2GN + H), the
// scan's output before the gate out_x e·d_in, the grouped RMSNorm's input (the gated output) e·d_in and its fp32 rstd
// per group 4·G (layernorm_gated.py LayerNormFn), and out_proj's input for its weight gradient (the normed output;
// under fp8 Transformer Engine keeps the 1-byte copy: g_in). in_proj's input and norm output are the block's
// hidden-sized terms. Nemotron-3-Nano at t = 1, bf16: 20,608 + 8,192 + 8,192 + 32 + 8,192 = 45,216 B per token.
double mamba_saved_bytes_per_token(const ModelSpec& m, double t, double e, double g_in) {
  const double w = static_cast<double>(m.mamba_in_proj()) / t, d_in = static_cast<double>(m.mamba_inner()) / t;
  const double groups = static_cast<double>(m.mamba_groups) / t;
  return e * w + 2.0 * e * d_in + 4.0 * groups + g_in * d_in;
}

Split layer_terms(const ModelSpec& m, LayerKind k, std::int64_t b, std::int64_t s, const ActivationOptions& o) {
  check(b, s, o);
  const double t = o.tp, e = activation_element_bytes(o.precision), mask = m.dropout ? 1.0 : 0.0;
  // Bytes per element of a tensor kept only as a GEMM's input for its weight gradient; and the extra 1-byte fp8 copy
  // the output projection keeps of the attention output (which the attention kernel keeps in 16 bits as well).
  const bool fp8_in = o.fp8_gemm_inputs && o.precision == Precision::FP8;
  const double g_in = fp8_in ? 1.0 : e, o_copy = fp8_in ? 1.0 : 0.0;
  const double sb = static_cast<double>(s) / o.cp * static_cast<double>(b);  // local tokens of the micro-batch
  const double h = static_cast<double>(m.hidden), d = static_cast<double>(m.d());
  const double a_r = m.heads / t, kv_r = std::max(static_cast<double>(m.g()) / t, 1.0);
  // Per FFN column: the activation's input (gated: gate and up) in 16 bits, its output (FFN-out's GEMM input) g_in.
  const double ffn_bytes = (m.gated() ? 2 : 1) * e + g_in;
  Split x{};
  const double hidden_tensors = m.parallel_attention ? 1.0 + m.norm_layers : m.norm_layers + 2.0;
  // Parallel attention: the layer input (both branches' norm input) and the norm_layers norm outputs (GEMM inputs);
  // sequential: the norm_layers norm inputs and the norm outputs feeding QKV and FFN-in — one per sub-block, with a
  // hidden dropout mask each (a hybrid model's single-block layer: one).
  const double blocks = k.blocks();
  x.hidden = m.parallel_attention ? sb * h * (e + (hidden_tensors - 1) * g_in + 2 * mask)
                                  : sb * h * (m.norm_layers * e + blocks * g_in + blocks * mask);
  // Per-token bytes of the TP-split tensors (multiplied by sb once at the end, the pre-issue-10 evaluation order).
  double per_token_tp = 0;
  if (k.attention == AttentionKind::Mamba) {
    per_token_tp = mamba_saved_bytes_per_token(m, t, e, g_in);
  } else if (k.attention == AttentionKind::None) {
  } else if (k.attention == AttentionKind::MLA) {
    const double qr = static_cast<double>(m.q_lora_rank), kvr = static_cast<double>(m.kv_lora_rank);
    const double n = static_cast<double>(m.qk_nope_head_dim), r = static_cast<double>(m.qk_rope_head_dim);
    const double v = static_cast<double>(m.v_head_dim);
    x.hidden += sb * (qr + kvr) * e;
    per_token_tp = g_in * (qr + kvr) + e * (r + 2 * a_r * (n + r) + 2 * a_r * v) + o_copy * a_r * v;
  } else {
    per_token_tp = e * a_r * d + 2 * e * kv_r * d + e * a_r * d + o_copy * a_r * d;
    if (m.qk_norm != QkNorm::None) per_token_tp += e * (a_r + kv_r) * d;
  }
  if (k.ffn == FfnKind::MoE) {
    x.hidden += sb * 5.0 * m.experts;
    per_token_tp += ffn_bytes * static_cast<double>(m.shared_experts * m.shared_ffn()) / t;
    const ExpertSplit split{o.experts.ep, o.experts.etp > 0 ? o.experts.etp : o.tp, o.experts.imbalance};
    const double routed = moe_routed_tokens(m, b, s, o.tp, o.cp, o.sp, split);
    const double fe_r = static_cast<double>(m.expert_ffn_hidden) / split.etp;
    x.routed = routed * ((g_in + e) * static_cast<double>(m.expert_width()) + ffn_bytes * fe_r + 4.0);
    // LatentMoE: fc2_latent_proj keeps its input, the combined ℓ-wide tokens (fc1_latent_proj's input is the pre-MLP
    // norm's output, already kept for the router and the shared experts).
    if (m.moe_latent > 0) x.hidden += sb * static_cast<double>(m.moe_latent) * g_in;
    // A clamped gated activation (GPT-OSS swiglu_limit, "activation_clamp") on the TEGroupedMLP path: Megatron-Core's
    // weighted_bias_quick_geglu_impl (fused_bias_geglu.py at the Megatron-LM commits of the 26.04.01 / 26.06
    // containers) clamps the two halves of FC1's output in eager PyTorch and concatenates them before the fused
    // quick-GEGLU, whose autograd Function saves its input — the clamped concatenation, a second [R × 2·f_e/etp]
    // tensor beside FC1's output (which the clamps' backward keeps: clamp saves its input). e·2·f_e/etp per routed
    // pair more; none on the fused grouped MLP (activation in the GEMM epilogue), freed with the rest of the
    // activation's tensors under moe_act (below) and moe recompute. [D, counted from the code path.]
    if (m.eager_activation_clamp(o.moe_fused_grouped_mlp)) x.clamped = routed * e * 2.0 * fe_r;
    x.routed += x.clamped;
  } else if (k.ffn == FfnKind::Dense) {
    per_token_tp += ffn_bytes * (static_cast<double>(m.ffn_hidden) / t);
  }
  x.tp = sb * per_token_tp;
  if (o.recompute == Recompute::Selective) {
    const RecomputeModules r = o.recompute_modules;
    const bool moe = k.ffn == FfnKind::MoE, mla = k.attention == AttentionKind::MLA;
    // layernorm: Megatron-Core discards a separate norm module's output and re-runs the norm from its kept input
    // (transformer_layer.py, CheckpointWithoutOutput). In the Transformer Engine layer spec
    // (megatron/core/models/gpt/gpt_layer_specs.py) the input norm is fused into the QKV LayerNormLinear
    // (input_layernorm = IdentityOp) except under MLA, and the pre-MLP norm into FC1 except in MoE layers (the router
    // and the experts read its output): so an MLA layer frees its input norm's output (the down-projections' input)
    // and an MoE layer its pre-MLP norm's output (router / shared-expert input), g_in·sbh each; other layers nothing.
    if (r.has(RecomputeModule::LayerNorm)) x.freed_hidden += sb * h * g_in * ((mla ? 1.0 : 0.0) + (moe ? 1.0 : 0.0));
    // mla_up_proj (multi_latent_attention.py qkv_up_checkpoint): the up-projections' outputs Q, K (a/t·(n + r) each)
    // and V (a/t·v) are discarded once the attention core has consumed them; the latents and the rope key stay.
    if (mla && r.has(RecomputeModule::MlaUpProj))
      x.freed += sb * e * a_r *
                 (2.0 * static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim) + static_cast<double>(m.v_head_dim));
    // mlp (a dense layer's MLP under tensor_parallel.checkpoint): keeps only the checkpoint's input — the residual
    // stream, which is the fused pre-MLP norm's input counted above — and frees the norm output FC1 keeps (g_in·sbh)
    // and the FFN tensors (Korthikanti Table 2's MLP terms: FC1 output, activation output).
    if (!moe && r.has(RecomputeModule::Mlp)) {
      x.freed_hidden += sb * h * g_in;
      x.freed += sb * ffn_bytes * static_cast<double>(m.ffn_hidden) / t;
    }
    if (moe) {
      const double shared_ffn = sb * ffn_bytes * static_cast<double>(m.shared_experts * m.shared_ffn()) / t;
      if (r.has(RecomputeModule::Moe)) {
        // moe (moe_layer.py: the whole MoE forward under one checkpoint whose input is the pre-MLP norm output):
        // router scores and map, every routed pair's tensors and the shared experts' FFN tensors are freed.
        x.freed_hidden += sb * 5.0 * m.experts + (m.moe_latent > 0 ? sb * static_cast<double>(m.moe_latent) * g_in : 0.0);
        x.freed += x.routed + shared_ffn;
      } else {
        // moe_act (experts.py: the activation under CheckpointWithoutOutput): FC1's output stays (the activation's
        // input), the activation output — FC2's input, g_in per routed pair and f_e/etp column — is freed.
        if (r.has(RecomputeModule::MoeAct)) {
          const ExpertSplit split{o.experts.ep, o.experts.etp > 0 ? o.experts.etp : o.tp, o.experts.imbalance};
          x.freed += moe_routed_tokens(m, b, s, o.tp, o.cp, o.sp, split) * g_in *
                     static_cast<double>(m.expert_ffn_hidden) / split.etp;
          // The clamps and the concatenation run inside the checkpoint too (it wraps the whole bias_act_func).
          x.freed += x.clamped;
        }
        // shared_experts (shared_experts.py under tensor_parallel.checkpoint): the shared experts' FFN tensors.
        if (r.has(RecomputeModule::SharedExperts)) x.freed += shared_ffn;
      }
    }
  }
  if (!k.has_attention()) x.core = 0;              // no attention core (Mamba mixer, or no mixer)
  else if (o.flash_attention) x.core = 4.0 * a_r * sb;  // fp32 logsumexp per (query, head)
  else x.core = a_r * sb * static_cast<double>(s) * (e + (m.dropout ? 1.0 + e : 0.0) + o.softmax_saved_extra);
  if (o.recompute == Recompute::Op) {
    // torchtitan's per-op policy (parallelize_llama.py @e7c0cae, the same at @9dec370): the checkpointed block keeps
    // its input (the SP shard under TP) and the outputs of the ops it must save — the 1st, 3rd, 5th and 7th matmuls
    // (wq: a/t·d, wv: kv_r·d, then w1: f/t and w2: h per token — w2's output before the reduce-scatter is the full
    // hidden width on every TP rank; a plain FFN: fc1 f/t only, its fc2 being the 6th), scaled_dot_product_attention's
    // output a/t·d and logsumexp (x.core), and with TP the two reduce-scatters' outputs h/t each. Everything else
    // (norms, RoPE, wk, wo, w3 or fc2, the activation, residual adds, TP all-gathers) is recomputed in the backward.
    // Outputs are 16-bit under fp8 too (torchao's Float8Linear returns the high-precision output; its amax scalars
    // are saved, negligible). Dropout masks are not kept (torchtitan checkpoints with preserve_rng_state=False).
    const double f_r = static_cast<double>(m.ffn_hidden) / t;
    const double ffn_kept = m.gated() ? f_r + h : f_r;
    const double rs = t > 1 && o.sp ? 2.0 * h / t : 0.0;
    x.op = sb * e * (h / sp_div(o) + 2 * a_r * d + kv_r * d + ffn_kept + rs) + (o.flash_attention ? x.core : 0.0);
  }
  return x;
}

}  // namespace

double activation_bytes_per_layer(const ModelSpec& m, LayerKind k, std::int64_t b, std::int64_t s,
                                  const ActivationOptions& o) {
  const Split x = layer_terms(m, k, b, s, o);
  if (o.recompute == Recompute::Full) {
    // Only the layer input e·sbh survives (Korthikanti Table 2, "full recompute": 2sbh; ÷t when SP-sharded).
    return activation_element_bytes(o.precision) * static_cast<double>(s) / o.cp * static_cast<double>(b) *
           static_cast<double>(m.hidden) / sp_div(o);
  }
  if (o.recompute == Recompute::Op) return x.op;
  const bool sel = o.recompute == Recompute::Selective;
  const double core = sel && o.recompute_modules.has(RecomputeModule::CoreAttn) ? 0.0 : x.core;
  return x.hidden / sp_div(o) + x.tp + core + x.routed - (x.freed_hidden / sp_div(o) + x.freed);
}

double activation_bytes_per_layer(const ModelSpec& m, std::int64_t b, std::int64_t s, const ActivationOptions& o) {
  return activation_bytes_per_layer(m, representative_kind(m), b, s, o);
}

double moe_dispatch_buffer_bytes(const ModelSpec& m, std::int64_t b, std::int64_t s, const ActivationOptions& o) {
  check(b, s, o);
  if (!m.is_moe()) return 0.0;
  const ExpertSplit split{o.experts.ep, o.experts.etp > 0 ? o.experts.etp : o.tp, o.experts.imbalance};
  const double tokens_in = static_cast<double>(s) / o.cp * static_cast<double>(b) / sp_div(o);
  const double sent = static_cast<double>(m.experts_per_token) * tokens_in;
  const double received = moe_routed_tokens(m, b, s, o.tp, o.cp, o.sp, split);
  return (sent + received) * static_cast<double>(m.expert_width()) * activation_element_bytes(o.precision);
}

// Transient bytes during one layer's backward: with full recompute the whole layer is regenerated (its
// no-recompute footprint); with selective, the recomputed attention core; without recompute nothing extra (the
// gradient buffers of the layer's own tensors are not modelled here). MoE layers add the dispatch buffers, alive
// while the backward's all-to-alls run.
double activation_working_bytes(const ModelSpec& m, LayerKind k, std::int64_t b, std::int64_t s,
                                const ActivationOptions& o) {
  const Split x = layer_terms(m, k, b, s, o);
  const double dispatch = k.ffn == FfnKind::MoE ? moe_dispatch_buffer_bytes(m, b, s, o) : 0.0;
  if (o.recompute == Recompute::None) return dispatch;
  ActivationOptions none = o;
  none.recompute = Recompute::None;
  if (o.recompute == Recompute::Full) return activation_bytes_per_layer(m, k, b, s, none) + dispatch;
  // Op: the recomputed tensors (what the layer keeps without recompute, less what the policy saved) exist again while
  // the layer's backward runs.
  if (o.recompute == Recompute::Op) return std::max(0.0, activation_bytes_per_layer(m, k, b, s, none) - x.op) + dispatch;
  // Selective: the recomputed modules' tensors exist again while the layer's backward runs.
  const double core = o.recompute_modules.has(RecomputeModule::CoreAttn) ? x.core : 0.0;
  return core + (x.freed_hidden / sp_div(o) + x.freed) + dispatch;
}

double activation_working_bytes(const ModelSpec& m, std::int64_t b, std::int64_t s, const ActivationOptions& o) {
  return activation_working_bytes(m, representative_kind(m), b, s, o);
}

// Korthikanti §4.3: the first stage keeps the embedding-dropout mask, sbh/t bytes per micro-batch with SP
// (1 byte per element; replicated on the TP ranks without SP). Nothing when training uses no dropout.
double embedding_activation_bytes(const ModelSpec& m, std::int64_t b, std::int64_t s, const ActivationOptions& o) {
  check(b, s, o);
  if (!m.dropout) return 0.0;
  return static_cast<double>(s) / o.cp * static_cast<double>(b) * static_cast<double>(m.hidden) / sp_div(o);
}

// Korthikanti §4.3 output layer: 4sbh/t·(1 + V/h) = final-norm input 2sbh/t + LM-head input 2sbh/t + fp32 logits
// 4sbV/t. Here with e-byte hidden tensors (÷t only under SP, which Korthikanti assumes) and Megatron's padded V.
// The logits cost more than Korthikanti's 4 B at their peak: the output layer writes them in the 16-bit compute
// type, and Megatron-Core's vocab-parallel cross entropy upcasts them to a separate fp32 tensor
// (megatron/core/tensor_parallel/cross_entropy.py VocabParallelCrossEntropy.calculate_logits_max:
// `vocab_parallel_logits.float()`) that it turns into the softmax in place and saves for backward, while the 16-bit
// logits stay referenced by the model's forward until the loss returns; in backward the fp32 gradient (the softmax,
// updated in place) and its 16-bit cast for the output layer coexist the same way: 2 + 4 B per logit when
// loss_upcasts_logits (the Megatron stacks; Megatron-LM ≤ 2022 upcast in gpt_model.py `output.float()` likewise);
// fp32 training: .float() is the same tensor, 4 B. The PyTorch stack's eager loss (eager_fp32_loss: torchtitan's
// F.cross_entropy(pred.float(), …), Hugging Face's logits.float(), autocast's fp32 cross entropy) holds more while
// log_softmax runs: the 16-bit logits (still referenced by the caller), their fp32 copy (log_softmax's input) and the
// fp32 log-probabilities it saves for backward, 2 + 4 + 4 B per logit (fp32 training 4 + 4); compiled (--compile:
// the loss compiled with the model, torchtitan since 2025-04 and nanoGPT) Inductor fuses the upcast into the
// reductions and Korthikanti's 4 B stand. A fused loss (--cross-entropy-fusion: llm.c's fused classifier, flash-attn's
// cross entropy) holds the 16-bit logits alone and writes their gradient over them: e B per logit.
double output_activation_bytes(const ModelSpec& m, std::int64_t b, std::int64_t s, const ActivationOptions& o) {
  check(b, s, o);
  const double sb = static_cast<double>(s) / o.cp * static_cast<double>(b);
  const double hidden = 2.0 * activation_element_bytes(o.precision) * sb * static_cast<double>(m.hidden) / sp_div(o);
  const bool upcast = o.precision != Precision::FP32;  // fp32 training: .float() is the same tensor
  const double logit_bytes = o.fused_cross_entropy           ? activation_element_bytes(o.precision)
                             : o.eager_fp32_loss             ? (upcast ? 2.0 + 4.0 : 4.0) + 4.0
                             : o.loss_upcasts_logits && upcast ? 4.0 + 2.0
                                                               : 4.0;
  const double logits = logit_bytes * sb * static_cast<double>(padded_vocab(m.vocab, o.tp)) / o.tp;
  return hidden + logits;
}

}  // namespace parsim
