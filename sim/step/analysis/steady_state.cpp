// Symmetry: with 1F1B, interleaved 1F1B and the periodic new schedules (ZB-H1, ZB-H2, DualPipe, DualPipeV; each
// checked against full simulation in tests/step/test_schedules.cpp) every micro-batch does the same work, so after the
// warm-up the timeline is periodic — each further micro-batch shifts everything after it by the same integer number of
// nanoseconds — and the boundary effects (ZeRO-1's gathers before the first forward, the gradient reduction after the
// last backward, the cool-down) do not depend on how many micro-batches lie between. A step with many micro-batches is
// therefore played out twice, with M1 = g·p and M2 = (g+1)·p micro-batches, g = ScheduleTraits::steady_groups:
//   2 for 1F1B, interleaved and ZB-H2 (past the 1F1B warm-up of p − 1 forwards and the interleaved warm-up of < 2·p
//     micro-batches; multiples of p as interleaving requires);
//   4 for ZB-H1 (its delayed W's shift which passes overlap the pipeline receives until then: from 2p and 3p the
//     bubble is off by ~1e-3, the step exact);
//   3 for DualPipe and DualPipeV (from 2p and 3p their step is off by 3–5e-4);
//   0 (always simulated in full) for GPipe (its memory grows with M) and ZB-V (its overlaps keep shifting: the bubble
//     is off by 5e-4 even from 5p and 6p);
// and every time-like quantity is extended linearly: x(M) = x(M2) + (M − M2)/(M2 − M1) · (x(M2) − x(M1)). Memory peaks
// are reached in the warm-up and are those of the M2 run. Requests for the timeline (--trace) simulate every
// micro-batch, and so do micro-batch counts whose M1/M2 runs would break the schedule's preconditions. Under
// post-validation the step time is the longest stage span, which grows by the same period per micro-batch: linear as
// well.
#include "sim/step/analysis.hpp"

namespace parsim {

std::pair<std::int64_t, std::int64_t> steady_state_runs(const Scenario& sc) {
  const std::int64_t g = schedule_traits(sc.train.schedule).steady_groups;
  return {g * sc.plan.pp, (g + 1) * sc.plan.pp};
}

bool steady_state_extendable(const Scenario& sc, bool keep_timeline, std::int64_t microbatches) {
  const ScheduleTraits& t = schedule_traits(sc.train.schedule);
  if (keep_timeline || t.steady_groups <= 0) return false;
  const auto [m1, m2] = steady_state_runs(sc);
  if (microbatches <= m2 + sc.plan.pp) return false;
  // The two short runs must be valid step shapes of the schedule themselves (m % pp, m ≥ 2·pp, even m).
  return !schedule_precondition_error(t, sc.plan.pp, sc.plan.vpp, m1) &&
         !schedule_precondition_error(t, sc.plan.pp, sc.plan.vpp, m2);
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
