// Symmetry: with 1F1B or interleaved 1F1B every micro-batch does the same work, so after the warm-up the timeline is
// periodic — each further micro-batch shifts everything after it by the same integer number of nanoseconds — and the
// boundary effects (ZeRO-1's gathers before the first forward, the gradient reduction after the last backward, the
// cool-down) do not depend on how many micro-batches lie between. A step with many micro-batches is therefore played
// out twice, with M1 = 2·p and M2 = 3·p micro-batches (past the 1F1B warm-up of p − 1 forwards and the interleaved
// warm-up of < 2·p micro-batches; multiples of p as interleaving requires), and every time-like quantity is extended
// linearly: x(M) = x(M2) + (M − M2)/(M2 − M1) · (x(M2) − x(M1)). Memory peaks are reached in the warm-up and are those
// of the M2 run. Which schedules qualify is their ScheduleTraits::periodic (GPipe does not: its memory grows with M);
// requests for the timeline (--trace) simulate every micro-batch. tests/step checks the result against full
// simulations.
#include "sim/step/analysis.hpp"

namespace parsim {

bool steady_state_extendable(const Scenario& sc, bool keep_timeline, std::int64_t microbatches) {
  if (keep_timeline || !schedule_traits(sc.train.schedule).periodic) return false;
  return microbatches > (kSteadyGroupsLong + 1) * sc.plan.pp;
}

StepReport extend_steady_state(const Scenario& sc, const StepReport& a, const StepReport& b, std::int64_t m1,
                               std::int64_t m2, std::int64_t m) {
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

}  // namespace parsim
