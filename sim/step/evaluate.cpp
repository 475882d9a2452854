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

namespace {

// Symmetry: with 1F1B or interleaved 1F1B every micro-batch does the same work, so after the warm-up the timeline is
// periodic — each further micro-batch shifts everything after it by the same integer number of nanoseconds — and the
// boundary effects (ZeRO-1's gathers before the first forward, the gradient reduction after the last backward, the
// cool-down) do not depend on how many micro-batches lie between. A step with many micro-batches is therefore played
// out twice, with M1 = 2·p and M2 = 3·p micro-batches (past the 1F1B warm-up of p − 1 forwards and the interleaved
// warm-up of < 2·p micro-batches; multiples of p as interleaving requires), and every time-like quantity is extended
// linearly: x(M) = x(M2) + (M − M2)/(M2 − M1) ·
// (x(M2) − x(M1)). Memory peaks are reached in the warm-up and are those of the M2 run. tests/step checks the result
// against full simulations. GPipe (memory grows with M) and requests for the timeline (--trace) simulate every
// micro-batch.
constexpr std::int64_t kGroupsShort = 2, kGroupsLong = 3;

bool extendable(const Scenario& sc, const EvalOptions& opt, std::int64_t M) {
  if (opt.keep_timeline || sc.train.schedule == Schedule::GPipe) return false;
  return M > (kGroupsLong + 1) * sc.plan.pp;
}

Scenario with_microbatches(Scenario sc, std::int64_t m) {
  sc.train.gbs = m * sc.plan.dp * sc.train.mbs;
  return sc;
}

StepReport extend(const Scenario& sc, const StepReport& a, const StepReport& b, std::int64_t m1, std::int64_t m2,
                  std::int64_t m) {
  const double k = static_cast<double>(m - m2) / static_cast<double>(m2 - m1);
  auto lin = [k](double x1, double x2) { return x2 + k * (x2 - x1); };
  StepReport r = b;
  r.step_time_s = lin(a.step_time_s, b.step_time_s);
  r.window_s = lin(a.window_s, b.window_s);
  r.microbatches = m;
  r.events = a.events + b.events;
  r.simulated_microbatches = a.simulated_microbatches + b.simulated_microbatches;
  double bubble = 0, best = -1;
  for (std::size_t s = 0; s < r.stages.size(); ++s) {
    const StageMetrics &x = a.stages[s], &y = b.stages[s];
    StageMetrics& z = r.stages[s];
    z.compute_s = lin(x.compute_s, y.compute_s);
    z.comm_s = lin(x.comm_s, y.comm_s);
    z.exposed_comm_s = lin(x.exposed_comm_s, y.exposed_comm_s);
    z.idle_s = lin(x.idle_s, y.idle_s);
    z.window_idle_s = lin(x.window_idle_s, y.window_idle_s);
    for (Axis c : kAxes) {
      z.comm_by_kind_s[c] = lin(x.comm_by_kind_s[c], y.comm_by_kind_s[c]);
      z.exposed_by_kind_s[c] = lin(x.exposed_by_kind_s[c], y.exposed_by_kind_s[c]);
    }
    if (r.window_s > 0) bubble += z.window_idle_s / r.window_s;
    if (z.compute_s + z.exposed_comm_s > best) {
      best = z.compute_s + z.exposed_comm_s;
      r.critical_stage = static_cast<int>(s);
    }
  }
  r.bubble_fraction = r.stages.size() > 1 ? bubble / static_cast<double>(r.stages.size()) : 0.0;
  r.exposed_comm_s = r.stages[r.critical_stage].exposed_comm_s;
  r.exposed_by_kind_s = r.stages[r.critical_stage].exposed_by_kind_s;
  finish_throughput(sc, r);
  return r;
}

}  // namespace

StepReport Evaluator::run(const Scenario& sc, const EvalOptions& opt) {
  if (!is_resolved(sc.train)) {
    Scenario r = sc;
    r.train = resolve_training(sc.plan, sc.model, sc.train);
    return run(r, opt);
  }
  const std::int64_t M = sc.train.micro_batches(sc.plan);
  if (extendable(sc, opt, M)) {
    const std::int64_t m1 = kGroupsShort * sc.plan.pp, m2 = kGroupsLong * sc.plan.pp;
    const StepReport a = simulate(with_microbatches(sc, m1), opt);
    const StepReport b = simulate(with_microbatches(sc, m2), opt);
    StepReport r = extend(sc, a, b, m1, m2, M);
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
  lower_step(sc, st_->costs, st_->ex.lowered);
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

}  // namespace parsim
