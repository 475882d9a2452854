#include "sim/step/evaluate.hpp"

#include "sim/step/lower.hpp"

namespace parsim {

struct Evaluator::State {
  ExecutedStep ex;
  engine::Executor executor;
  StepCosts costs;
  std::vector<MemorySample> samples;
};

Evaluator::Evaluator() : st_(std::make_unique<State>()) {}
Evaluator::~Evaluator() = default;

StepReport Evaluator::run(const Scenario& sc, const EvalOptions& opt) {
  StepReport rep;
  st_->costs = compute_step_costs(sc);
  lower_step(sc, st_->costs, st_->ex.lowered);
  st_->executor.run(st_->ex.lowered.graph, st_->ex.timeline);
  compute_metrics(sc, st_->costs, st_->ex, rep);
  st_->samples.clear();
  timeline_memory(sc, st_->costs, st_->ex, rep, opt.keep_timeline ? &st_->samples : nullptr);
  rep.warnings = plan_warnings(sc.plan, sc.model, sc.hw, sc.train);
  return rep;
}

const ExecutedStep& Evaluator::executed() const { return st_->ex; }
const StepCosts& Evaluator::costs() const { return st_->costs; }
const std::vector<MemorySample>& Evaluator::memory_samples() const { return st_->samples; }

StepReport evaluate(const Scenario& sc, const EvalOptions& opt) {
  Evaluator ev;
  return ev.run(sc, opt);
}

MemoryReport estimate_memory(const Scenario& sc) { return estimate_memory_from_costs(sc, compute_step_costs(sc)); }

}  // namespace parsim
