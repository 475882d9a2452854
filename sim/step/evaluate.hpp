// parsim sim/step — lower a Scenario to a task graph, run it on the engine, compute metrics from the timeline.
#pragma once
#include "sim/step/report.hpp"

#include <cstdint>
#include <memory>
#include <utility>
#include <string>
#include <vector>

namespace parsim {

struct ExecutedStep;  // sim/step/lowered.hpp
struct StepCosts;     // sim/step/costs.hpp
struct MemorySample;  // sim/step/analysis.hpp

struct EvalOptions {
  bool keep_timeline = false;  // keep the executed timeline (for --trace)
  bool layer_detail = false;   // lower per-layer tasks (trace detail); otherwise chunks are composed analytically
  // An explicit pass order instead of the scenario's schedule (tests and schedule experiments; every micro-batch is
  // simulated then). It must keep the contract of pipeline_schedule (plans/schedule.hpp).
  const ScheduleOrder* schedule = nullptr;
};

// Pure function: thread-safe, no globals, same inputs → bit-identical outputs. A scenario whose settings still hold
// "auto" values (is_resolved() false) is evaluated on a resolved copy (resolve_training, plans/scenario.hpp).
StepReport evaluate(const Scenario& sc, const EvalOptions& opt = {});

// The same, keeping its scratch memory between calls (one per thread in the sweep) and, on request, the timeline.
class Evaluator {
public:
  Evaluator();
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;
  StepReport run(const Scenario& sc, const EvalOptions& opt = {});
  // The sweep's path: the step costs are computed once per plan, for the memory pre-check and for every simulation
  // of it (the steady-state runs differ only in the micro-batch count, which no cost depends on).
  // estimate_memory() computes and keeps the costs of `sc` (a resolved scenario, is_resolved() true);
  // run_with_kept_costs(sc) then simulates that same `sc` on them — as run(sc) would, bit for bit.
  MemoryReport estimate_memory(const Scenario& sc);
  StepReport run_with_kept_costs(const Scenario& sc, const EvalOptions& opt = {});
  // For callers that evaluate many plans on one hardware (the sweep): `megatron_hw` = megatron_compute(sc.hw) of
  // every scenario given from now on, so that the costs do not copy the hardware per plan (null: derived per plan).
  // The pointee must outlive the calls.
  void share_megatron_hardware(const Hardware* megatron_hw);
  // For callers that evaluate many plans on one hardware (the sweep): with `same`, the caller promises that every
  // scenario given from now on has the same hardware (equal content; a copy is fine) until the next call — the
  // evaluator then memoises collective costs across plans (hardware/collective_memo.hpp: exact, per evaluator, so
  // per thread). Each call starts with empty memos; false (the default) prices every collective afresh.
  void fix_hardware(bool same);
  // Collective costs answered from the memos so far, and computed (fix_hardware).
  std::pair<std::uint64_t, std::uint64_t> collective_memo_use() const;
  // Plans of one graph shape re-fill a kept graph instead of lowering it again (lowering::ShapeCache, on by default;
  // the same graph, number for number). Off: every simulation builds its graph (tests compare the two).
  void reuse_graphs(bool on);
  // Simulations so far that re-filled a kept graph, and that built one.
  std::pair<std::uint64_t, std::uint64_t> graph_reuse() const;
  // After run(): the executed step, its costs and the memory counter samples (for the trace).
  const ExecutedStep& executed() const;
  const StepCosts& costs() const;
  const std::vector<MemorySample>& memory_samples() const;

private:
  StepReport run_impl(const Scenario& sc, const EvalOptions& opt, bool kept_costs);
  // One full event simulation (kept_costs: on the costs already in the state, else computed first; memory: with the
  // timeline's memory analysis, else StepReport::memory and the stages' peaks stay empty).
  StepReport simulate(const Scenario& sc, const EvalOptions& opt, bool kept_costs, bool memory = true);
  struct State;
  std::unique_ptr<State> st_;
};

// The one-line verdict of a plan that does not fit ("DOES NOT FIT: stage 1 needs 204.40 GiB … but one NVIDIA B200
// has 178.35 GiB"): the first entry of StepReport::warnings and the table's headline when memory.fits is false.
std::string does_not_fit_message(const Scenario& sc, const MemoryReport& m);

// Cheap pre-check for the sweep: memory of the most loaded stage from the closed-form in-flight counts of the
// schedule (no simulation). Returns peak_gib as evaluate() would, within its model.
MemoryReport estimate_memory(const Scenario& sc);

}  // namespace parsim
