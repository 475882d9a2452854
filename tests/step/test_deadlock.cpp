// Host programs a real process could run: the legacy-Megatron interleaved deadlock (session 4) and the grid of legacy
// plans around it.
//
// The cycle `parsim predict --model llama3-8b --plan tp1pp4dp2cp2vpp8 --gbs 64 --mbs 1 --recompute selective
// --stack megatron-legacy` hit ("132 of 1072 tasks can never start"): the legacy stack does not overlap the gradient
// reduction (--overlap-grad-reduce off), so every gradient bucket waits on the GPU for the stage's LAST backward
// (chunk 0's, micro-batch M−1). The lowering nevertheless issued chunk c's buckets right after chunk c's own last
// backward — under interleaving, chunk 7's comes long before chunk 0's. The reduction could not start, the kernels
// issued after it filled CUDA's launch queue (1,024 kernels: selective recompute and the CP ring add enough of them
// per pass, which is why recompute none/full, cp1 or fewer chunks ran), the host blocked until the reduction started,
// and so never issued the backward the reduction waited for:
//   host (launch queue full) → waits for the reduction to start → waits for chunk 0's last backward → waits for the
//   host to issue it.
// Megatron calls finish_grad_sync() (legacy: allreduce_gradients()) after the whole forward-backward schedule, so the
// reductions are now issued after the stage's last backward (sim/step/lower/data_parallel.cpp, dp_bucketed_once).
//
// The invariant tested here is broader than the launch queue: on one host, nothing is issued before work it depends
// on is issued (a process launches kernels in program order and cannot launch one that waits for a kernel it has not
// launched yet — Megatron orders work by program order, not by cross-stream events on later launches).
#include "helpers.hpp"
#include "sim/step/costs.hpp"
#include "sim/step/lowered.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

using namespace parsim;
using namespace parsim::testing;

namespace {

Scenario legacy(const std::string& plan, Recompute rc, std::int64_t gbs = 64) {
  ScenarioInput a;
  a.model = "llama3-8b";
  a.plan = plan;
  a.train.gbs = gbs;
  a.train.mbs = 1;
  a.train.recompute = rc;
  a.train.stack = Stack::MegatronLegacy;
  return resolve_scenario(a);
}

// Dependencies u → v whose two ends are on the same host program (a GPU task it issues or one of its host tasks)
// with v at or before u in program order: a program no process could run. Returns the count (0 for a valid lowering)
// and the first such pair in `first`.
int host_order_violations(const Lowered& lw, std::string& first) {
  const engine::TaskGraph& g = lw.graph;
  auto on_host = [&](engine::TaskId t) { return g.issued(t) || g.is_host_task(t); };
  int bad = 0;
  for (std::size_t i = 0; i < g.num_deps(); ++i) {
    const engine::TaskId u = g.dep_from(i), v = g.dep_to(i);
    if (!on_host(u) || !on_host(v)) continue;
    if (g.stream_device(g.stream(u)) != g.stream_device(g.stream(v))) continue;
    if (g.host_order(u) < g.host_order(v)) continue;
    if (bad++ == 0) first = "task " + std::to_string(u) + " → task " + std::to_string(v);
  }
  return bad;
}

}  // namespace

TEST_CASE("deadlock regression: legacy Megatron, interleaved vpp8, cp2, selective recompute runs") {
  const Scenario sc = legacy("tp1pp4dp2cp2vpp8", Recompute::Selective);
  REQUIRE_FALSE(sc.train.overlap_grad_reduce);  // the legacy stack's default, the premise of the cycle above
  REQUIRE(sc.train.micro_batches(sc.plan) == 32);  // 64 sequences / (dp 2 × mbs 1)
  StepReport r;
  REQUIRE_NOTHROW(r = evaluate(sc));
  CHECK(r.step_time_s > 0);

  // The lowering: every gradient reduction is issued after the stage's last backward segment, which it waits for.
  const StepCosts k = compute_step_costs(sc);
  Lowered lw;
  lower_step(sc, k, lw);
  std::string first;
  CHECK_MESSAGE(host_order_violations(lw, first) == 0, first);
  const engine::TaskGraph& g = lw.graph;
  for (int s = 0; s < sc.plan.pp; ++s) {
    std::uint64_t last_backward = 0, first_reduce = ~std::uint64_t{0};
    int reductions = 0;
    for (engine::TaskId t = 0; t < g.num_tasks(); ++t) {
      const TaskInfo& ti = lw.info[g.tag(t)];
      if (ti.stage != s || !g.issued(t)) continue;
      if (ti.kind == TaskKind::Backward) last_backward = std::max(last_backward, g.host_order(t));
      if (ti.kind == TaskKind::GradReduce) {
        first_reduce = std::min(first_reduce, g.host_order(t));
        ++reductions;
      }
    }
    // dp 2: one bucketed all-reduce task per chunk (no split without overlap) — 8 chunks per stage.
    CHECK(reductions == 8);
    CHECK(first_reduce > last_backward);
  }
}

TEST_CASE("deadlock sweep: no legacy-Megatron plan of the small grid deadlocks or issues out of order") {
  // recompute none/selective/full × cp 1/2 × vpp 1/2/4/8 × pp 2/4 on llama3-8b (32 layers: every vpp·pp ≤ 32 divides
  // them), tp1, dp filling 16 and 32 GPUs; gbs 64 (M = 64/dp, a multiple of pp as interleaving needs).
  int plans = 0;
  for (Recompute rc : {Recompute::None, Recompute::Selective, Recompute::Full})
    for (int cp : {1, 2})
      for (int vpp : {1, 2, 4, 8})
        for (int pp : {2, 4})
          for (int gpus : {16, 32}) {
            const int dp = gpus / (pp * cp);
            std::string plan = "tp1pp" + std::to_string(pp) + "dp" + std::to_string(dp) + "cp" + std::to_string(cp);
            if (vpp > 1) plan += "vpp" + std::to_string(vpp);
            const std::string what = plan + " recompute " + std::to_string(static_cast<int>(rc));
            const Scenario sc = legacy(plan, rc);
            CHECK_MESSAGE(evaluate(sc).step_time_s > 0, what);
            const StepCosts k = compute_step_costs(sc);
            Lowered lw;
            lower_step(sc, k, lw);
            std::string first;
            const int bad = host_order_violations(lw, first);
            const std::string msg = what + ": " + first;
            CHECK_MESSAGE(bad == 0, msg);
            ++plans;
          }
  CHECK(plans == 96);
}
