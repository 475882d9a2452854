// parsim sim/step — lower a Scenario to a task graph, run it on the engine, compute metrics from the timeline.
#pragma once
#include "sim/step/report.hpp"

#include <optional>
#include <string>

namespace parsim {

struct Timeline;  // sim/step/lower.hpp

struct EvalOptions {
  bool keep_timeline = false;  // keep the executed timeline (for --trace)
  bool layer_detail = false;   // lower per-layer tasks (trace detail); otherwise chunks are composed analytically
};

// Pure function: thread-safe, no globals, same inputs → bit-identical outputs.
StepReport evaluate(const Scenario& sc, const EvalOptions& opt = {});

// Cheap pre-check for the sweep: memory of the most loaded stage from the closed-form in-flight counts of the
// schedule (no simulation). Returns peak_gib as evaluate() would, within its model.
MemoryReport estimate_memory(const Scenario& sc);

// Builds and validates a Scenario from user inputs (throws InputError).
struct ScenarioArgs {
  std::string model, plan, gpu = "h100";
  int gpus_per_node = 0;
  std::int64_t seq = 0, gbs = 0, mbs = 1;
  std::string recompute = "none", precision = "bf16", schedule = "1f1b";
  bool sp = false;
  bool schedule_given = false;
};
Scenario make_scenario(const ScenarioArgs& a);

}  // namespace parsim
