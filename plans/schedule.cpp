// parsim plans/ — pipeline schedules as data: for each stage, the order of its forward and backward passes.
//
// GPipe (Huang et al. 2019): all forwards, then all backwards, micro-batches in order (fill–drain, FIFO).
// 1F1B (PipeDream-Flush, Narayanan et al. 2021 §2.2; Megatron-Core forward_backward_pipelining_without_interleaving):
//   stage i runs min(p−i−1, m) warm-up forwards, then alternates one forward / one backward, then drains backwards.
// Interleaved 1F1B (Narayanan et al. 2021 §2.2.1; Megatron-Core forward_backward_pipelining_with_interleaving):
//   each stage holds v model chunks; the v·m chunk-passes are ordered by Megatron-Core's schedule table — groups of
//   G = p micro-batches (default --microbatch-group-size-per-virtual-pipeline-stage), within a group chunk 0 for the
//   G micro-batches, then chunk 1, …; the last group takes the remaining micro-batches. Virtual micro-batch k runs
//   forward on chunk table[k].chunk and backward on chunk v−1−table[k].chunk, both for micro-batch table[k].mb.
//   Warm-up: (p−i−1)·2 + (v−1)·G forward chunk-passes (capped at v·m: then all forwards run first),
//   then 1F1B pairs (forward k+warm-up, backward k), then the remaining backwards (get_pp_rank_microbatches).
#include "plans/plan.hpp"

#include "sim/core/error.hpp"

#include <algorithm>

namespace parsim {

namespace {

struct TableEntry {
  int mb, chunk;
};

// Megatron-Core get_schedule_table(num_microbatches, num_model_chunks, microbatch_group_size_per_vp_stage).
std::vector<TableEntry> schedule_table(int m, int v, int group) {
  std::vector<TableEntry> t;
  t.reserve(static_cast<std::size_t>(m) * static_cast<std::size_t>(v));
  for (int lo = 0; lo < m; lo += group) {
    const int hi = lo + group >= m ? m : lo + group;  // the last group takes the rest
    for (int c = 0; c < v; ++c)
      for (int mb = lo; mb < hi; ++mb) t.push_back({mb, c});
  }
  return t;
}

}  // namespace

std::vector<std::vector<PipeOp>> pipeline_schedule(Schedule s, int pp, int vpp, int microbatches) {
  const std::string what = to_string(s) + " schedule with pp" + std::to_string(pp) + ", vpp" + std::to_string(vpp) +
                           ", " + std::to_string(microbatches) + " micro-batches";
  require(pp >= 1 && vpp >= 1 && microbatches >= 1, what + ": pp, vpp and micro-batches must be positive");
  const int p = pp, v = vpp, m = microbatches;
  std::vector<std::vector<PipeOp>> ops(static_cast<std::size_t>(p));
  for (auto& o : ops) o.reserve(2 * static_cast<std::size_t>(m) * static_cast<std::size_t>(v));

  if (s == Schedule::GPipe || s == Schedule::OneFOneB) {
    require(v == 1, what + ": vpp > 1 needs the interleaved schedule");
    for (int i = 0; i < p; ++i) {
      auto& o = ops[static_cast<std::size_t>(i)];
      const int warmup = s == Schedule::GPipe ? m : std::min(p - i - 1, m);
      for (int k = 0; k < warmup; ++k) o.push_back({PipeOp::Forward, k, 0});
      for (int k = 0; k < m - warmup; ++k) {  // steady state: forward k+warmup, backward k
        o.push_back({PipeOp::Forward, k + warmup, 0});
        o.push_back({PipeOp::Backward, k, 0});
      }
      for (int k = m - warmup; k < m; ++k) o.push_back({PipeOp::Backward, k, 0});
    }
    return ops;
  }

  // Interleaved.
  require(v > 1, what + ": the interleaved schedule needs vpp > 1");
  require(p > 1, what + ": the interleaved schedule needs pp > 1");
  const int group = p;  // Megatron-Core default G = p
  require(m % group == 0,
          what + ": micro-batches must be a multiple of pp" + std::to_string(p) + " (Megatron-Core, G = pp)");
  const auto table = schedule_table(m, v, group);
  const int total = m * v;
  for (int i = 0; i < p; ++i) {
    auto& o = ops[static_cast<std::size_t>(i)];
    const int warmup = std::min((p - i - 1) * 2 + (v - 1) * group, total);
    auto fwd = [&](int k) {
      const auto& e = table[static_cast<std::size_t>(k)];
      o.push_back({PipeOp::Forward, e.mb, e.chunk});
    };
    auto bwd = [&](int k) {
      const auto& e = table[static_cast<std::size_t>(k)];
      o.push_back({PipeOp::Backward, e.mb, v - 1 - e.chunk});
    };
    for (int k = 0; k < warmup; ++k) fwd(k);
    for (int k = 0; k < total - warmup; ++k) {
      fwd(k + warmup);
      bwd(k);
    }
    for (int k = total - warmup; k < total; ++k) bwd(k);
  }
  return ops;
}

}  // namespace parsim
