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
#include "plans/schedule.hpp"

#include "sim/core/error.hpp"
#include "sim/core/text.hpp"

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

// GPipe and 1F1B: warm-up forwards (all of them for GPipe, p−i−1 for 1F1B), then one forward / one backward pairs,
// then the remaining backwards.
ScheduleOrder one_chunk_order(int p, int m, bool gpipe) {
  ScheduleOrder ops(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) {
    auto& o = ops[static_cast<std::size_t>(i)];
    o.reserve(2 * static_cast<std::size_t>(m));
    const int warmup = gpipe ? m : std::min(p - i - 1, m);
    for (int k = 0; k < warmup; ++k) o.push_back({PipeOp::Forward, k, 0});
    for (int k = 0; k < m - warmup; ++k) {  // steady state: forward k+warmup, backward k
      o.push_back({PipeOp::Forward, k + warmup, 0});
      o.push_back({PipeOp::Backward, k, 0});
    }
    for (int k = m - warmup; k < m; ++k) o.push_back({PipeOp::Backward, k, 0});
  }
  return ops;
}

ScheduleOrder gpipe_order(int p, int, int m) { return one_chunk_order(p, m, true); }
ScheduleOrder one_f_one_b_order(int p, int, int m) { return one_chunk_order(p, m, false); }

ScheduleOrder interleaved_order(int p, int v, int m) {
  ScheduleOrder ops(static_cast<std::size_t>(p));
  const int group = p;  // Megatron-Core default G = p
  const auto table = schedule_table(m, v, group);
  const int total = m * v;
  for (int i = 0; i < p; ++i) {
    auto& o = ops[static_cast<std::size_t>(i)];
    o.reserve(2 * static_cast<std::size_t>(total));
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

const std::vector<ScheduleTraits>& table() {
  // Sweep enumeration order: 1F1B before GPipe (plans/space.cpp takes the first allowed one when pp = 1).
  static const std::vector<ScheduleTraits> t = {
      {Schedule::OneFOneB, "1f1b", {"pipedream-flush"},
       "PipeDream-Flush, Narayanan et al. 2021 §2.2; Megatron-Core forward_backward_pipelining_without_interleaving",
       false, false, false, true, true, one_f_one_b_order},
      {Schedule::GPipe, "gpipe", {}, "Huang et al. 2019", false, false, false, false, false, gpipe_order},
      {Schedule::Interleaved, "interleaved", {"interleaved-1f1b", "interleaved1f1b"},
       "Narayanan et al. 2021 §2.2.1; Megatron-Core forward_backward_pipelining_with_interleaving", true, true, false,
       true, true, interleaved_order},
  };
  return t;
}

}  // namespace

const std::vector<ScheduleTraits>& all_schedule_traits() { return table(); }

const ScheduleTraits& schedule_traits(Schedule s) {
  for (const ScheduleTraits& t : table())
    if (t.schedule == s) return t;
  throw InputError("the pipeline schedule is 'auto' here: resolve it first (resolve_training)");
}

std::string to_string(Schedule s) {
  if (s == Schedule::Auto) return "auto";
  return schedule_traits(s).name;
}

Schedule parse_schedule(const std::string& s) {
  const std::string l = to_lower(trim(s));
  if (l == "auto") return Schedule::Auto;
  std::string names = "auto";
  for (const ScheduleTraits& t : table()) {
    if (l == t.name) return t.schedule;
    for (const std::string& a : t.aliases)
      if (l == a) return t.schedule;
    names += ", ";
    names += t.name;
  }
  throw InputError("--schedule '" + s + "' is not valid (choose " + names + ")");
}

ScheduleOrder pipeline_schedule(Schedule s, int pp, int vpp, int microbatches) {
  const ScheduleTraits& t = schedule_traits(s);
  const std::string what = std::string(t.name) + " schedule with pp" + std::to_string(pp) + ", vpp" +
                           std::to_string(vpp) + ", " + std::to_string(microbatches) + " micro-batches";
  require(pp >= 1 && vpp >= 1 && microbatches >= 1, what + ": pp, vpp and micro-batches must be positive");
  if (t.uses_vpp) {
    require(vpp > 1, what + ": the " + t.name + " schedule needs vpp > 1");
    require(pp > 1, what + ": the " + t.name + " schedule needs pp > 1");
  } else {
    require(vpp == 1, what + ": vpp > 1 needs a schedule with virtual stages (interleaved)");
  }
  if (t.microbatches_multiple_of_pp)
    require(microbatches % pp == 0,
            what + ": micro-batches must be a multiple of pp" + std::to_string(pp) + " (Megatron-Core, G = pp)");
  return t.order(pp, vpp, microbatches);
}

}  // namespace parsim
