// Per-pass costs of one training step: what one rank of each pipeline stage spends per layer and micro-batch.
// Sources for the communication pattern: Shoeybi et al. 2019 §3 (TP all-reduces), Korthikanti et al. 2022 §4.2.2
// (sequence parallelism), Megatron-Core tensor_parallel/layers.py (SP backward re-gather), TransformerEngine's
// AttnFuncWithCPAndKVP2P (context-parallel ring), domain-notes §6.
#include "sim/step/lower.hpp"

#include <algorithm>
#include <cmath>

namespace parsim {

PassCost& PassCost::operator+=(const PassCost& o) {
  compute_s += o.compute_s;
  tp_s += o.tp_s;
  tp_exposed_s += o.tp_exposed_s;
  cp_s += o.cp_s;
  cp_exposed_s += o.cp_exposed_s;
  return *this;
}

PassCost PassCost::scaled(double k) const {
  PassCost p = *this;
  p.compute_s *= k;
  p.tp_s *= k;
  p.tp_exposed_s *= k;
  p.cp_s *= k;
  p.cp_exposed_s *= k;
  return p;
}

namespace {

struct Ctx {
  const Scenario& sc;
  const Hardware& hw;
  Precision prec;
  GroupShape tp_group, cp_group;
  bool tp_overlap;
};

double coll(const Ctx& c, Collective k, double bytes, const GroupShape& g) {
  return g.size <= 1 ? 0.0 : collective_time(c.hw, k, bytes, g).time_s;
}

// TP communication of one layer pass: returns {total, exposed}. `overlap_compute_s` is GEMM time that
// TE/Megatron's --tp-comm-overlap can hide the communication behind.
void add_tp(const Ctx& c, PassCost& p, double total, double overlappable_s) {
  p.tp_s += total;
  if (c.tp_overlap) {
    // Userbuffer overlap splits each GEMM into chunks pipelined with the collective; the first chunk's
    // communication is never hidden (≈ 1/tp of it).
    double floor = total / std::max(2, c.sc.plan.tp);
    p.tp_exposed_s += std::max(floor, total - overlappable_s);
  } else {
    p.tp_exposed_s += total;
  }
}

}  // namespace

StepCosts compute_step_costs(const Scenario& sc) {
  const ModelSpec& m = sc.model;
  const Plan& pl = sc.plan;
  const TrainingConfig& tr = sc.train;
  // Kernels of the software stack: the Megatron-Core / Transformer Engine stack has its own attention, fp8 casts and
  // sustained fraction (hardware/presets.cpp); collectives and memory bandwidth are the hardware's.
  const bool megatron = tr.stack == Stack::Megatron;
  const Hardware hw_te = megatron ? megatron_compute(sc.hw) : Hardware{};
  const Hardware& hw = megatron ? hw_te : sc.hw;
  const int gpn = hw.node.gpus_per_node;
  Ctx c{sc, hw, tr.precision, group_shape(pl, GroupKind::TP, gpn), group_shape(pl, GroupKind::CP, gpn),
        tr.tp_comm_overlap};
  StepCosts out;
  out.layers_per_chunk = layers_per_chunk(m.layers, pl.pp, pl.vpp);

  const std::int64_t b = tr.mbs, s = tr.seq;
  const int t = pl.tp, cp = pl.cp;
  const double act_bytes = activation_element_bytes(tr.precision);
  const double tokens_local = static_cast<double>(b * s) / cp;
  const double A = tokens_local * static_cast<double>(m.hidden) * act_bytes;  // one activation tensor, domain-notes §6

  // ---- one transformer layer -------------------------------------------------------------------------
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
  // speed-up is well below the 2× of its peak (Micikevicius et al. 2022, arXiv 2209.05433; TE docs).
  double cast_f = 0, cast_b = 0;
  if (tr.precision == Precision::FP8) {
    const double cb = hw.gpu.compute.fp8_cast_bytes_per_element;
    double in_f = 0, in_b = 0;
    for (const GemmShape& g : lw.gemms) {
      const double M = static_cast<double>(g.m), N = static_cast<double>(g.n), K = static_cast<double>(g.k);
      in_f += cb * (M * K + K * N);
      in_b += cb * M * N + 2.0 * (M * K + K * N + M * N);
    }
    cast_f = memory_bound_time_s(hw, in_f, 2 * static_cast<int>(lw.gemms.size()));
    cast_b = memory_bound_time_s(hw, in_b, 4 * static_cast<int>(lw.gemms.size()));
  }
  const double overhead = hw.gpu.compute.layer_overhead_s;

  PassCost fwd;
  fwd.compute_s = gemm_f + attn_f + elem_f + cast_f + overhead;
  // TP: without SP, 2 all-reduces of A per layer forward and 2 backward (Shoeybi 2019 §3, f/g operators).
  // With SP, each all-reduce becomes an all-gather + reduce-scatter of the same A (Korthikanti 2022 §4.2.2), and the
  // backward re-gathers the two layer inputs for the weight gradients (MCore), overlapped with the dgrad GEMMs.
  double tp_f = 0, tp_b = 0, tp_regather = 0;
  if (t > 1) {
    if (tr.sp) {
      tp_f = 2 * (coll(c, Collective::AllGather, A, c.tp_group) + coll(c, Collective::ReduceScatter, A, c.tp_group));
      tp_b = tp_f;
      tp_regather = 2 * coll(c, Collective::AllGather, A, c.tp_group);
    } else {
      tp_f = 2 * coll(c, Collective::AllReduce, A, c.tp_group);
      tp_b = tp_f;
    }
  }
  add_tp(c, fwd, tp_f, gemm_f);

  // CP: ring exchange of the local K‖V chunk, c−1 steps per layer, each overlapped with one step of attention
  // (TE AttnFuncWithCPAndKVP2P); backward circulates K/V and dK/dV (≈ 2× the bytes). domain-notes §6.
  double cp_step_f = 0, cp_step_b = 0;
  if (cp > 1) {
    const double kv_heads_local = std::max(1.0, static_cast<double>(m.kv_heads) / t);
    const double kv_bytes = 2.0 * tokens_local * kv_heads_local * static_cast<double>(m.head_dim) * act_bytes;
    cp_step_f = coll(c, Collective::SendRecv, kv_bytes, c.cp_group);
    cp_step_b = coll(c, Collective::SendRecv, 2 * kv_bytes, c.cp_group);
    fwd.cp_s = (cp - 1) * cp_step_f;
    fwd.cp_exposed_s = (cp - 1) * std::max(0.0, cp_step_f - attn_f / cp);
  }

  PassCost bwd;
  bwd.compute_s = gemm_dgrad + gemm_wgrad + attn_b + elem_b + cast_b + overhead;
  add_tp(c, bwd, tp_b, gemm_dgrad + gemm_wgrad);
  if (tp_regather > 0) {
    bwd.tp_s += tp_regather;
    bwd.tp_exposed_s += std::max(0.0, tp_regather - gemm_dgrad);
  }
  if (cp > 1) {
    bwd.cp_s = (cp - 1) * cp_step_b;
    bwd.cp_exposed_s = (cp - 1) * std::max(0.0, cp_step_b - attn_b / cp);
  }
  // Recompute (Korthikanti 2022 §5): full reruns the whole layer forward — TP/CP communication included — before
  // its backward; selective reruns only the attention core (QKᵀ, softmax, ·V).
  if (tr.recompute == Recompute::Full) bwd += fwd;
  else if (tr.recompute == Recompute::Selective) bwd.compute_s += attn_f;
  out.layer_fwd = fwd;
  out.layer_bwd = bwd;

  // ---- embedding (first virtual stage) and output layer (last) ------------------------------------------
  // Embedding lookup: write A, read the rows; backward scatter-adds into the (padded V/t × h) gradient.
  out.embed_fwd.compute_s = memory_bound_time_s(hw, 2 * A, 2) + overhead;
  out.embed_bwd.compute_s = memory_bound_time_s(hw, 3 * A, 2) + overhead;
  if (t > 1) {  // vocab-parallel embedding: partial sums are all-reduced (reduce-scattered with SP)
    double e = tr.sp ? coll(c, Collective::ReduceScatter, A, c.tp_group) : coll(c, Collective::AllReduce, A, c.tp_group);
    add_tp(c, out.embed_fwd, e, 0);
  }
  const GemmShape head = lm_head_gemm(m, b, s, t, cp);
  // The output layer stays in 16 bit under fp8 recipes (TE / Megatron keep the first and last layers in bf16).
  const Precision head_prec = tr.precision == Precision::FP8 ? Precision::BF16 : tr.precision;
  // Cross-entropy on fp32 logits (Korthikanti §4.3), per logit: forward casts the 16-bit GEMM output up (read 2,
  // write 4) and runs log-softmax (read 4, write 4) = 14 B; backward writes the softmax gradient (read 4, write 4)
  // and casts it down for the GEMMs (read 4, write 2) = 14 B.
  const double logits = tokens_local * static_cast<double>(head.n);
  out.head_fwd.compute_s = gemm_time_s(hw, head.m, head.n, head.k, head_prec) +
                           memory_bound_time_s(hw, 14 * logits + A / (tr.sp ? t : 1), 4) + overhead;
  out.head_bwd.compute_s = gemm_time_s(hw, head.m, head.k, head.n, head_prec) +
                           gemm_time_s(hw, head.k, head.n, head.m, head_prec) +
                           memory_bound_time_s(hw, 14 * logits, 3) + overhead;
  if (t > 1) {
    // SP: the LM head input is all-gathered forward and reduce-scattered backward; without SP its input gradient is
    // all-reduced backward. The vocab-parallel cross-entropy all-reduces only 3 floats per token (negligible).
    if (tr.sp) {
      add_tp(c, out.head_fwd, coll(c, Collective::AllGather, A, c.tp_group), 0);
      add_tp(c, out.head_bwd, coll(c, Collective::ReduceScatter, A, c.tp_group), 0);
    } else {
      add_tp(c, out.head_bwd, coll(c, Collective::AllReduce, A, c.tp_group), 0);
    }
  }

  // ---- pipeline point-to-point: one activation forward / one gradient backward per micro-batch and boundary
  // (MCore schedules.py: b·(s/c)·h elements, ÷t with SP).
  out.p2p_bytes = A / (tr.sp ? t : 1);
  if (pl.pp > 1) {
    const int stride = pl.tp * pl.cp * pl.dp;  // ranks between adjacent stages in the tp-cp-dp-pp layout
    GroupShape g;
    g.size = 2;
    if (stride % gpn == 0 || stride >= gpn) {
      g.per_node = 1;
      g.nodes = 2;
      g.concurrent_per_node = gpn;  // every GPU of the node sends to its peer stage at the same time
    } else {
      g.per_node = 2;
      g.nodes = 1;
      g.concurrent_per_node = gpn;
    }
    out.p2p_s = collective_time(hw, Collective::SendRecv, out.p2p_bytes, g).time_s;
  }

  // ---- parameters and data-parallel groups ----------------------------------------------------------------
  out.layer_params = layer_params_per_tp_rank(m, t);
  out.embed_params = embedding_params_per_tp_rank(m, t);
  out.head_params = lm_head_params_per_tp_rank(m, t);
  // Tied embeddings on a single stage share one matrix: the head then owns only the final norm. With pp > 1 Megatron
  // keeps a copy of the embedding on the last stage (and all-reduces its gradient between the two).
  if (m.tied_embeddings && pl.pp == 1) out.head_params = static_cast<double>(m.hidden);
  out.dp_group = group_shape(pl, GroupKind::DPxCP, gpn);
  out.shard_group = out.dp_group;
  out.replica_group = GroupShape{};
  out.shard_degree = 1;
  switch (pl.sharding) {
    case Sharding::None: break;
    case Sharding::HSDP:
      out.shard_group = group_shape(pl, GroupKind::HSDPShard, gpn);
      out.replica_group = group_shape(pl, GroupKind::HSDPReplica, gpn);
      out.shard_degree = out.shard_group.size;
      break;
    default: out.shard_degree = out.dp_group.size; break;
  }
  // AdamW step, memory-bound (Loshchilov & Hutter 2019 update): read fp32 master weight, m, v and fp32 gradient
  // (16 B), write master, m, v (12 B) and the 16-bit model copy (2 B), plus the gradient-norm read for clipping (4 B).
  out.optimizer_bytes_per_param = 34;
  return out;
}

}  // namespace parsim
