// One transformer layer's pass costs: GEMMs timed by shape, attention, elementwise kernels, fp8 casts, the TP and CP
// communication Megatron issues inside the layer, and recomputation. Sources: Shoeybi et al. 2019 §3 (TP f/g
// operators), Korthikanti et al. 2022 §4.2.2 and §5 (SP, recompute), Micikevicius et al. 2022 (fp8 casts), domain-notes
// §6. The backward is given whole (what 1F1B-class schedules run) and as its two halves for schedules that split it
// (Qi et al. 2024, "Zero Bubble Pipeline Parallelism" §2: B = input gradient, W = weight gradient).
#include "sim/step/costs.hpp"

#include <algorithm>

namespace parsim {

PassCost& PassCost::operator+=(const PassCost& o) {
  compute_s += o.compute_s;
  tp_s += o.tp_s;
  tp_exposed_s += o.tp_exposed_s;
  cp_s += o.cp_s;
  cp_exposed_s += o.cp_exposed_s;
  ep_s += o.ep_s;
  ep_exposed_s += o.ep_exposed_s;
  host_s += o.host_s;
  kernels += o.kernels;
  return *this;
}

PassCost PassCost::operator-(const PassCost& o) const {
  PassCost p = *this;
  p.compute_s -= o.compute_s;
  p.tp_s -= o.tp_s;
  p.tp_exposed_s -= o.tp_exposed_s;
  p.cp_s -= o.cp_s;
  p.cp_exposed_s -= o.cp_exposed_s;
  p.ep_s -= o.ep_s;
  p.ep_exposed_s -= o.ep_exposed_s;
  p.host_s -= o.host_s;
  p.kernels -= o.kernels;
  return p;
}

PassCost PassCost::scaled(double k) const {
  PassCost p = *this;
  p.compute_s *= k;
  p.tp_s *= k;
  p.tp_exposed_s *= k;
  p.cp_s *= k;
  p.cp_exposed_s *= k;
  p.ep_s *= k;
  p.ep_exposed_s *= k;
  p.host_s *= k;
  p.kernels *= k;
  return p;
}

PassCosts layer_costs(const CostContext& c) {
  const Scenario& sc = c.sc;
  const ModelSpec& m = sc.model;
  const TrainingConfig& tr = sc.train;
  const Hardware& hw = c.hw;
  const std::int64_t b = tr.mbs, s = tr.seq;
  const int t = sc.plan.tp, cp = sc.plan.cp;
  const double act_bytes = activation_element_bytes(tr.precision);
  const double tokens_local = static_cast<double>(b * s) / cp;
  const double A = activation_bytes(sc);  // one activation tensor, domain-notes §6

  const LayerWork lw = layer_work(m, b, s, t, cp, tr.sp, tr.precision);
  double gemm_f = 0, gemm_dgrad = 0, gemm_wgrad = 0;
  for (const GemmShape& g : lw.gemms) {
    gemm_f += gemm_time_s(hw, g.m, g.n, g.k, tr.precision);
    gemm_dgrad += gemm_time_s(hw, g.m, g.k, g.n, tr.precision);  // dX[m×k] = dY[m×n]·Wᵀ[n×k]
    gemm_wgrad += gemm_time_s(hw, g.k, g.n, g.m, tr.precision);  // dW[k×n] = Xᵀ[k×m]·dY[m×n]
  }
  const double attn_flops = lw.attention.forward_flops();
  double attn_f = 0, attn_b = 0;
  if (tr.flash_attention) {
    attn_f = attention_fwd_time_s(hw, attn_flops, lw.attention.seq_kv, lw.attention.head_dim, tr.precision,
                                  lw.attention.causal);
    attn_b = attention_bwd_time_s(hw, attn_flops, lw.attention.seq_kv, lw.attention.head_dim, tr.precision,
                                  lw.attention.causal);
  } else {
    // Unfused attention (Megatron-LM before FlashAttention, 2022): batched GEMMs over b·a/t heads that compute the
    // full s×s scores (no causal skipping), with the s² tensor in HBM. Forward: S = QKᵀ, fused scale-mask-softmax
    // (read 2 B, write 2 B per score), O = P·V; backward: dP = dO·Vᵀ, dV = Pᵀ·dO, softmax backward (read P and dP,
    // write dS: 6 B), dQ = dS·K, dK = dSᵀ·Q; attention dropout (when the model has it) adds a 1-byte mask and a
    // read+write of the scores in each direction (Shoeybi 2019; Korthikanti 2022 §4: the 5as²b activation bytes).
    const AttentionShape& at = lw.attention;
    const std::int64_t bh = at.batch * at.heads, sq = at.seq_q, skv = at.seq_kv, d = at.head_dim;
    const double scores = static_cast<double>(bh) * static_cast<double>(sq) * static_cast<double>(skv);
    const double drop = m.dropout ? 5.0 : 0.0;
    attn_f = gemm_time_s(hw, bh * sq, skv, d, tr.precision) + gemm_time_s(hw, bh * sq, d, skv, tr.precision) +
             memory_bound_time_s(hw, (4.0 + drop) * scores, drop > 0 ? 2 : 1);
    attn_b = gemm_time_s(hw, bh * sq, skv, d, tr.precision) + gemm_time_s(hw, bh * skv, d, sq, tr.precision) +
             gemm_time_s(hw, bh * sq, d, skv, tr.precision) + gemm_time_s(hw, bh * skv, d, sq, tr.precision) +
             memory_bound_time_s(hw, (6.0 + drop) * scores, drop > 0 ? 2 : 1);
  }
  // Norms, activation function, residual adds, rotary: ~10 kernels forward, twice the traffic backward.
  const double elem_f = memory_bound_time_s(hw, lw.elementwise_bytes_fwd, 10);
  const double elem_b = memory_bound_time_s(hw, 2 * lw.elementwise_bytes_fwd, 12);
  // fp8 (Transformer Engine recipes): every GEMM operand is quantised first — forward the input X[m×k] and the weight
  // W[k×n], backward the output gradient dY[m×n] — reading 16 bit and writing 8 bit, and the backward GEMMs need
  // transposed fp8 copies of X, W and dY (read and write 1 byte each). This memory-bound work is why fp8's end-to-end
  // speed-up is well below the 2× of its peak (Micikevicius et al. 2022, arXiv 2209.05433; TE docs). Of the backward
  // casts, dgrad (dX = dY·Wᵀ) needs dY and Wᵀ, wgrad (dW = Xᵀ·dY) needs Xᵀ and dYᵀ.
  double cast_f = 0, cast_b = 0, cast_b_input = 0, cast_b_weight = 0;
  if (tr.precision == Precision::FP8) {
    const double cb = hw.gpu.compute.fp8_cast_bytes_per_element;
    double in_f = 0, in_b = 0, in_bi = 0, in_bw = 0;
    for (const GemmShape& g : lw.gemms) {
      const double M = static_cast<double>(g.m), N = static_cast<double>(g.n), K = static_cast<double>(g.k);
      in_f += cb * (M * K + K * N);
      in_b += cb * M * N + 2.0 * (M * K + K * N + M * N);
      in_bi += cb * M * N + 2.0 * K * N;
      in_bw += 2.0 * (M * K + M * N);
    }
    const int gemms = static_cast<int>(lw.gemms.size());
    cast_f = memory_bound_time_s(hw, in_f, 2 * gemms);
    cast_b = memory_bound_time_s(hw, in_b, 4 * gemms);
    cast_b_input = memory_bound_time_s(hw, in_bi, 2 * gemms);
    cast_b_weight = memory_bound_time_s(hw, in_bw, 2 * gemms);
  }
  const double overhead = hw.gpu.compute.layer_overhead_s;

  // TP: without SP, 2 all-reduces of A per layer forward and 2 backward (Shoeybi 2019 §3, f/g operators).
  // With SP, each all-reduce becomes an all-gather + reduce-scatter of the same A (Korthikanti 2022 §4.2.2), and the
  // backward re-gathers the two layer inputs for the weight gradients (MCore), overlapped with the dgrad GEMMs.
  double tp_f = 0, tp_b = 0, tp_regather = 0;
  if (t > 1) {
    if (tr.sp) {
      tp_f = 2 * (group_collective_s(c, Collective::AllGather, A, c.tp_group) +
                  group_collective_s(c, Collective::ReduceScatter, A, c.tp_group));
      tp_b = tp_f;
      tp_regather = 2 * group_collective_s(c, Collective::AllGather, A, c.tp_group);
    } else {
      tp_f = 2 * group_collective_s(c, Collective::AllReduce, A, c.tp_group);
      tp_b = tp_f;
    }
  }
  // CP: ring exchange of the local K‖V chunk, c−1 steps per layer, each overlapped with one step of attention
  // (TE AttnFuncWithCPAndKVP2P); backward circulates K/V and dK/dV (≈ 2× the bytes). domain-notes §6.
  double cp_step_f = 0, cp_step_b = 0;
  if (cp > 1) {
    const double kv_heads_local = std::max(1.0, static_cast<double>(m.kv_heads) / t);
    const double kv_bytes = 2.0 * tokens_local * kv_heads_local * static_cast<double>(m.head_dim) * act_bytes;
    cp_step_f = group_collective_s(c, Collective::SendRecv, kv_bytes, c.cp_group);
    cp_step_b = group_collective_s(c, Collective::SendRecv, 2 * kv_bytes, c.cp_group);
  }

  PassCosts out;
  PassCost& fwd = out.fwd;
  fwd.compute_s = gemm_f + attn_f + elem_f + cast_f + overhead;
  add_tp_comm(c, fwd, tp_f, gemm_f);
  if (cp > 1) {
    fwd.cp_s = (cp - 1) * cp_step_f;
    fwd.cp_exposed_s = (cp - 1) * std::max(0.0, cp_step_f - attn_f / cp);
  }
  auto add_cp_bwd = [&](PassCost& p) {
    if (cp <= 1) return;
    p.cp_s = (cp - 1) * cp_step_b;
    p.cp_exposed_s = (cp - 1) * std::max(0.0, cp_step_b - attn_b / cp);
  };
  // Recompute (Korthikanti 2022 §5): full reruns the whole layer forward — TP/CP communication included — before
  // its backward; selective reruns only the attention core (QKᵀ, softmax, ·V). It precedes the input gradient.
  auto add_recompute = [&](PassCost& p) {
    if (tr.recompute == Recompute::Full) p += fwd;
    else if (tr.recompute == Recompute::Selective) p.compute_s += attn_f;
  };

  PassCost& bwd = out.bwd;
  bwd.compute_s = gemm_dgrad + gemm_wgrad + attn_b + elem_b + cast_b + overhead;
  add_tp_comm(c, bwd, tp_b, gemm_dgrad + gemm_wgrad);
  if (tp_regather > 0) {
    bwd.tp_s += tp_regather;
    bwd.tp_exposed_s += std::max(0.0, tp_regather - gemm_dgrad);
  }
  add_cp_bwd(bwd);
  add_recompute(bwd);

  // The halves: B holds everything on the path to the previous layer's gradient (dgrad GEMMs, attention and
  // elementwise backward, the TP reduction of dX, the CP ring, recompute); W the weight-gradient GEMMs, their fp8
  // transposes and, with SP, the re-gather of the layer inputs they need. Each half is its own kernel sequence.
  PassCost& bi = out.bwd_input;
  bi.compute_s = gemm_dgrad + attn_b + elem_b + cast_b_input + overhead;
  add_tp_comm(c, bi, tp_b, gemm_dgrad);
  add_cp_bwd(bi);
  add_recompute(bi);
  PassCost& bw = out.bwd_weight;
  bw.compute_s = gemm_wgrad + cast_b_weight + overhead;
  if (tp_regather > 0) {
    bw.tp_s += tp_regather;
    bw.tp_exposed_s += std::max(0.0, tp_regather - gemm_wgrad);
  }
  return out;
}

}  // namespace parsim
