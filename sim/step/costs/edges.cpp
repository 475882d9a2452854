// The embedding (first virtual stage) and the LM head + loss (last virtual stage): their costs and where they sit.
// Sources: Megatron-Core VocabParallelEmbedding and the vocab-parallel cross-entropy (tensor_parallel/), Korthikanti
// et al. 2022 §4.3 (fp32 logits), TE/Megatron fp8 recipes (first and last layers kept in 16 bit).
#include "sim/step/costs.hpp"

namespace parsim {

void edge_costs(const CostContext& c, PassCosts& embed, PassCosts& head) {
  const Scenario& sc = c.sc;
  const TrainingConfig& tr = sc.train;
  const Hardware& hw = c.hw;
  const int t = sc.plan.tp;
  const double A = activation_bytes(sc);
  const double tokens_local = static_cast<double>(tr.mbs * tr.seq) / sc.plan.cp;
  const double overhead = hw.gpu.compute.layer_overhead_s;

  // Embedding lookup: write A, read the rows; backward scatter-adds into the (padded V/t × h) gradient — a weight
  // gradient only (nothing flows further back), so a split backward puts it in W.
  embed.fwd.compute_s = memory_bound_time_s(hw, 2 * A, 2) + overhead;
  embed.bwd.compute_s = memory_bound_time_s(hw, 3 * A, 2) + overhead;
  if (t > 1) {  // vocab-parallel embedding: partial sums are all-reduced (reduce-scattered with SP)
    double e = tr.sp ? group_collective_s(c, Collective::ReduceScatter, A, c.tp_group)
                     : group_collective_s(c, Collective::AllReduce, A, c.tp_group);
    add_tp_comm(c, embed.fwd, e, 0);
  }
  embed.bwd_input = PassCost{};
  embed.bwd_weight = embed.bwd;

  const GemmShape g = lm_head_gemm(sc.model, tr.mbs, tr.seq, t, sc.plan.cp);
  // The output layer stays in 16 bit under fp8 recipes (TE / Megatron keep the first and last layers in bf16).
  const Precision prec = tr.precision == Precision::FP8 ? Precision::BF16 : tr.precision;
  // Cross-entropy on fp32 logits (Korthikanti §4.3), per logit: forward casts the 16-bit GEMM output up (read 2,
  // write 4) and runs log-softmax (read 4, write 4) = 14 B; backward writes the softmax gradient (read 4, write 4)
  // and casts it down for the GEMMs (read 4, write 2) = 14 B.
  // With --cross-entropy-fusion (llm.c llmc/fused_classifier.cuh: softmax, loss and dlogits of a row in one kernel,
  // possible because the loss gradient 1/(B·T) is known before the backward): the kernel reads each 16-bit logit
  // twice — once for the row's max and sum, once to write its gradient over it in place — and writes it once, so
  // e = 2 B read in the forward and 2 + 2 B in the backward; one launch each, no fp32 logits.
  // With --cross-entropy-fusion-impl te (Megatron stack; Transformer Engine pytorch/triton/cross_entropy.py
  // cross_entropy_forward / cross_entropy_backward, as TE ran it until 2026-07): an online-softmax kernel reads each
  // 16-bit logit for the row's max and sum (e), the loss kernel reads it again and writes the logit gradient over it
  // in place (2e): 3e B in 2 kernels forward; the backward scales that gradient by the loss gradient in place
  // (element_mul_kernel: 2e B, 1 kernel). No fp32 logits. (TE 2026-07, 01bbe3eea, keeps an fp32 gradient instead:
  // not modelled.)
  const double logits = tokens_local * static_cast<double>(g.n);
  const double e = activation_element_bytes(tr.precision);
  const bool te_ce = tr.te_loss();
  const double loss_fwd = tr.cross_entropy_fusion ? memory_bound_time_s(hw, e * logits + A / (tr.sp ? t : 1), 1)
                          : te_ce ? memory_bound_time_s(hw, 3 * e * logits + A / (tr.sp ? t : 1), 2)
                                  : memory_bound_time_s(hw, 14 * logits + A / (tr.sp ? t : 1), 4);
  head.fwd.compute_s = gemm_time_s(hw, g.m, g.n, g.k, prec) + loss_fwd + overhead;
  const double dgrad = gemm_time_s(hw, g.m, g.k, g.n, prec), wgrad = gemm_time_s(hw, g.k, g.n, g.m, prec);
  const double loss_bwd = tr.cross_entropy_fusion ? memory_bound_time_s(hw, 2 * e * logits, 0)
                          : te_ce ? memory_bound_time_s(hw, 2 * e * logits, 1)
                                  : memory_bound_time_s(hw, 14 * logits, 3);
  head.bwd.compute_s = dgrad + wgrad + loss_bwd + overhead;
  head.bwd_input.compute_s = dgrad + loss_bwd + overhead;
  head.bwd_weight.compute_s = wgrad + overhead;
  if (t > 1) {
    // SP: the LM head input is all-gathered forward and reduce-scattered backward; without SP its input gradient is
    // all-reduced backward. The vocab-parallel cross-entropy all-reduces only 3 floats per token (negligible).
    if (tr.sp) {
      add_tp_comm(c, head.fwd, group_collective_s(c, Collective::AllGather, A, c.tp_group), 0);
      const double rs = group_collective_s(c, Collective::ReduceScatter, A, c.tp_group);
      add_tp_comm(c, head.bwd, rs, 0);
      add_tp_comm(c, head.bwd_input, rs, 0);
    } else {
      const double ar = group_collective_s(c, Collective::AllReduce, A, c.tp_group);
      add_tp_comm(c, head.bwd, ar, 0);
      add_tp_comm(c, head.bwd_input, ar, 0);
    }
  }
}

// Multi-token prediction (DeepSeek-V3 report §2.2; Megatron-Core transformer/multi_token_prediction.py, trained with
// --mtp-num-layers, the Megatron-Bridge DeepSeek-V3 recipes' mtp_num_layers = 1): after the main model's last layer,
// each MTP module embeds the input shifted by one more token (the shared embedding), normalises it and the hidden
// state, projects their concatenation [T × 2h] back to h (eh_proj, a column-parallel linear: [T × 2h]·[2h × h/t]),
// runs one transformer layer of the model's last layer kind and the shared output layer with its cross-entropy. All of
// it runs on the last virtual stage, after the head (Megatron places the MTP block with the loss: the recipe's
// pipeline layout 'tmL'). Per module, forward and backward: embedding + eh_proj GEMMs + layer + LM head and loss.
void add_mtp_costs(const CostContext& c, const PassCosts& embed, const PassCosts& last_layer, PassCosts& head) {
  const Scenario& sc = c.sc;
  const int n = sc.model.mtp_layers;
  if (n <= 0) return;
  const TrainingConfig& tr = sc.train;
  const Hardware& hw = c.hw;
  const std::int64_t tokens = tr.mbs * (tr.seq / sc.plan.cp), h = sc.model.hidden;
  const std::int64_t h_r = (h + sc.plan.tp - 1) / sc.plan.tp;
  const Precision prec = tr.precision == Precision::FP8 ? Precision::BF16 : tr.precision;
  const double eh_f = gemm_time_s(hw, tokens, h_r, 2 * h, prec);
  const double eh_dgrad = gemm_time_s(hw, tokens, 2 * h, h_r, prec), eh_wgrad = gemm_time_s(hw, 2 * h, h_r, tokens, prec);
  const PassCosts lm = head;
  // The module's embedding, layer and head copies come from passes compute_step_costs has already slowed to the
  // slowest GPU of the plan (slowest_gpu_factor); its own eh_proj GEMMs take the same factor (until moe6 they did not).
  const double slow = slowest_gpu_factor(hw, sc.plan.world());
  auto add = [&](PassCost& dst, const PassCost& e, const PassCost& layer, const PassCost& out, double gemms) {
    PassCost one = e;
    one += layer;
    one += out;
    one.compute_s += gemms * slow;
    dst += one.scaled(n);
  };
  add(head.fwd, embed.fwd, last_layer.fwd, lm.fwd, eh_f);
  add(head.bwd, embed.bwd, last_layer.bwd, lm.bwd, eh_dgrad + eh_wgrad);
  add(head.bwd_input, embed.bwd_input, last_layer.bwd_input, lm.bwd_input, eh_dgrad);
  add(head.bwd_weight, embed.bwd_weight, last_layer.bwd_weight, lm.bwd_weight, eh_wgrad);
}

}  // namespace parsim
