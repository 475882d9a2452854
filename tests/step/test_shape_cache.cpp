// The lowering's shape cache (sim/step/lower/builder.hpp ShapeCache): a plan whose graph has the shape of one lowered
// before re-fills that graph's numbers from its recipes instead of building it. The contract is exactness — the
// re-filled graph is the graph a build gives, number for number — so every result of a sweep's candidates must be
// bit-identical with and without the cache, in the sweep's own order (where consecutive plans share shapes and the
// steady-state runs alternate two) and in a shuffled order (where plans of one shape but other tp, dp or mbs meet in the
// cache: what the shape key leaves out must not change the structure). The spaces cover every schedule (F&B-pair schedules and explicit orders are built,
// not cached), every sharding strategy (bucketed once, reduce-scatter per micro-batch, sharded parameters with HSDP),
// the three stacks (their host programs differ: p2p syncs, data syncs, per-step work), overlap flags off and a MoE
// model and a model of mixed layer kinds (neither cached: expert collectives per segment, per-range costs).
// The same comparison covers the sweep's collective memo (Evaluator::fix_hardware, hardware/collective_memo.hpp), whose
// contract is exactness as well: the cached evaluator memoises collective costs across plans, the plain one does not.
#include "sim/sweep/sweep.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>

using namespace parsim;

namespace {

const std::string kModels = std::string(PARSIM_TEST_DATA) + "/models/";

struct Space {
  std::string model;
  int gpus;
  std::int64_t gbs;
  Stack stack;
  bool overlap;
  double bucket_bytes = 0;  // 0: the stack's
  int timing_log_level = 0;
};

// Evaluates every candidate of the space with a cached and an uncached evaluator and counts the results that differ.
int differing(const Space& sp, bool shuffled, std::uint64_t& refills, std::uint64_t& candidates) {
  Scenario base;
  base.model = resolve_model(sp.model);
  base.hw = resolve_hardware("h100", 0);
  base.train.gbs = sp.gbs;
  base.train.seq = 2048;
  base.train.stack = sp.stack;
  base.train.overlap_grad_reduce = sp.overlap;
  base.train.overlap_param_gather = sp.overlap;
  base.train.bucket_bytes = sp.bucket_bytes;
  base.train.timing_log_level = sp.timing_log_level;
  SpaceFilter f;
  f.mbs = {1, 2};
  f.recompute = {Recompute::None, Recompute::Full};
  f.schedule = {Schedule::GPipe,     Schedule::OneFOneB, Schedule::Interleaved, Schedule::ZBH1,
                Schedule::ZBH2,      Schedule::ZBV,    Schedule::DualPipe,    Schedule::DualPipeV};
  std::vector<Candidate> space = enumerate_space(base.model, base.hw, sp.gpus, base.train, f);
  if (shuffled) std::shuffle(space.begin(), space.end(), std::mt19937(2024));
  // The cached evaluator also runs as the sweep's do: collective costs memoised across plans (fix_hardware,
  // hardware/collective_memo.hpp) and the Megatron kernels derived once (share_megatron_hardware); the plain one
  // prices every collective and derives the kernels per plan.
  Evaluator cached, plain;
  plain.reuse_graphs(false);
  cached.fix_hardware(true);
  const Hardware megatron_hw = megatron_compute(base.hw);
  cached.share_megatron_hardware(&megatron_hw);
  Scenario sc = base;
  int bad = 0;
  for (const Candidate& c : space) {
    sc.plan = c.plan;
    sc.train = c.train;
    const PlanResult a = evaluate_candidate(sc, cached, SweepOptions{}, nullptr);
    const PlanResult b = evaluate_candidate(sc, plain, SweepOptions{}, nullptr);
    const bool same = a.verdict == b.verdict && a.reason == b.reason && a.step_time_s == b.step_time_s &&
                      a.peak_gib == b.peak_gib && a.allocated_peak_gib == b.allocated_peak_gib && a.mfu == b.mfu &&
                      a.bubble_fraction == b.bubble_fraction && a.exposed_comm_s == b.exposed_comm_s &&
                      a.exposed_by_kind_s == b.exposed_by_kind_s && a.main_loss == b.main_loss;
    if (!same && bad++ == 0)
      MESSAGE("first difference: " << c.plan.to_string() << " mbs " << c.train.mbs << " schedule "
                                   << to_string(c.train.schedule) << ": " << a.step_time_s << " s vs " << b.step_time_s
                                   << " s");
  }
  refills = cached.graph_reuse().first;
  candidates = space.size();
  CHECK(plain.graph_reuse().first == 0);  // (the uncached evaluator built every graph)
  // Every candidate prices its TP/CP/pipeline collectives, and candidates that share tp, mbs and the group shapes ask
  // for the same ones: the memo answers some; the plain evaluator has none.
  CHECK(cached.collective_memo_use().first > 0);
  CHECK(plain.collective_memo_use() == std::pair<std::uint64_t, std::uint64_t>{0, 0});
  return bad;
}

}  // namespace

TEST_CASE("shape cache: sweep results are bit-identical with and without re-filled graphs and memoised collectives") {
  const Space spaces[] = {
      {"llama2-7b", 16, 64, Stack::Megatron, true},
      // 1 GB buckets: a split backward groups ⌈1e9 / (4 B · 202M / tp)⌉ = 2, 3, 5, 10 layers at tp 1, 2, 4, 8, so plans
      // of one pipeline shape differ in their segments (the shape key's bucket group).
      {"llama2-7b", 16, 64, Stack::Megatron, true, 1e9},
      {"llama2-7b", 8, 32, Stack::MegatronLegacy, false},
      // Megatron's per-pass timers: a drained sync before and after every pass (host work of its own recipe).
      {"llama2-7b", 8, 32, Stack::Megatron, true, 0, 2},
      {"llama2-7b", 8, 32, Stack::PyTorch, true},
      {kModels + "mixtral-8x7b-v0.1.config.json", 16, 32, Stack::Megatron, true},
      {kModels + "gemma-2-9b.config.json", 8, 32, Stack::Megatron, true},
  };
  for (const Space& sp : spaces)
    for (bool shuffled : {false, true}) {
      if (shuffled && sp.model != "llama2-7b") continue;  // (the others are never cached: one order suffices)
      std::uint64_t refills = 0, candidates = 0;
      const int bad = differing(sp, shuffled, refills, candidates);
      INFO(sp.model << " on " << sp.gpus << " GPUs, stack " << to_string(sp.stack) << std::string(shuffled ? ", shuffled" : "")
                    << ": " << candidates << " candidates, " << refills << " graphs re-filled");
      CHECK(candidates > 0);
      CHECK(bad == 0);
      // Uniform dense spaces repeat shapes (the same stages, chunks and micro-batches with other tp/dp/mbs): the
      // cache is used. Mixtral (expert parameters) and Gemma 2 (sliding-window and full layers) are built every time.
      if (sp.model == "llama2-7b") CHECK(refills > 0);
      else CHECK(refills == 0);
    }
}
