// evaluate(): costs → lowering → engine → analysis, with the periodic steady state extended where it holds.
#include "sim/step/evaluate.hpp"

#include "sim/step/analysis.hpp"
#include "sim/step/lower/builder.hpp"

#include <cmath>

namespace parsim {

struct Evaluator::State {
  ExecutedStep ex;
  engine::Executor executor;
  StepCosts costs;
  std::vector<MemorySample> samples;
  lowering::Scratch lowering;
  Scenario shortened;  // the steady-state runs' scenario (assigned, not constructed: keeps its allocations)
};

Evaluator::Evaluator() : st_(std::make_unique<State>()) {}
Evaluator::~Evaluator() = default;

StepReport Evaluator::run(const Scenario& sc, const EvalOptions& opt) {
  if (!is_resolved(sc.train)) {
    Scenario r = sc;
    r.train = resolve_training(sc.plan, sc.model, sc.train);
    return run(r, opt);
  }
  const std::int64_t M = sc.train.micro_batches(sc.plan);
  if (!opt.schedule && steady_state_extendable(sc, opt.keep_timeline, M)) {
    const std::int64_t m1 = kSteadyGroupsShort * sc.plan.pp, m2 = kSteadyGroupsLong * sc.plan.pp;
    // The same scenario with m1, then m2 micro-batches.
    Scenario& shortened = st_->shortened;
    shortened = sc;
    shortened.train.gbs = m1 * sc.plan.dp * sc.train.mbs;
    const StepReport a = simulate(shortened, opt);
    shortened.train.gbs = m2 * sc.plan.dp * sc.train.mbs;
    const StepReport b = simulate(shortened, opt);
    StepReport r = extend_steady_state(sc, a, b, m1, m2, M);
    r.warnings = plan_warnings(sc.plan, sc.model, sc.hw, sc.train);
    return r;
  }
  StepReport rep = simulate(sc, opt);
  rep.warnings = plan_warnings(sc.plan, sc.model, sc.hw, sc.train);
  return rep;
}

StepReport Evaluator::simulate(const Scenario& sc, const EvalOptions& opt) {
  StepReport rep;
  st_->costs = compute_step_costs(sc);
  lowering::lower_step(sc, st_->costs, st_->ex.lowered, opt.schedule, st_->lowering);
  st_->executor.run(st_->ex.lowered.graph, st_->ex.timeline);
  compute_metrics(sc, st_->costs, st_->ex, rep);
  st_->samples.clear();
  timeline_memory(sc, st_->costs, st_->ex, rep, opt.keep_timeline ? &st_->samples : nullptr);
  return rep;
}

const ExecutedStep& Evaluator::executed() const { return st_->ex; }
const StepCosts& Evaluator::costs() const { return st_->costs; }
const std::vector<MemorySample>& Evaluator::memory_samples() const { return st_->samples; }

StepReport evaluate(const Scenario& sc, const EvalOptions& opt) {
  Evaluator ev;
  return ev.run(sc, opt);
}

MemoryReport estimate_memory(const Scenario& sc) {
  if (!is_resolved(sc.train)) {
    Scenario r = sc;
    r.train = resolve_training(sc.plan, sc.model, sc.train);
    return estimate_memory(r);
  }
  return estimate_memory_from_costs(sc, compute_step_costs(sc));
}

TrainEstimate train_estimate(const Scenario& sc, const StepReport& r, double tokens, double price, double goodput) {
  TrainEstimate t;
  t.tokens = tokens;
  t.goodput = goodput;
  const double tokens_per_step = static_cast<double>(sc.train.gbs * sc.train.seq);
  const double wall_s = std::ceil(tokens / tokens_per_step) * r.step_time_s / goodput;
  t.days = wall_s / 86400.0;
  t.gpu_hours = wall_s / 3600.0 * sc.plan.world();
  if (price > 0) {
    t.cost_usd = t.gpu_hours * price;
    t.has_cost = true;
  }
  return t;
}

}  // namespace parsim
