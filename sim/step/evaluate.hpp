// parsim sim/step — lower a Scenario to a task graph, run it on the engine, compute metrics from the timeline.
#pragma once
#include "sim/step/report.hpp"

#include <memory>
#include <string>
#include <vector>

namespace parsim {

struct ExecutedStep;  // sim/step/lower.hpp
struct StepCosts;
struct MemorySample;

struct EvalOptions {
  bool keep_timeline = false;  // keep the executed timeline (for --trace)
  bool layer_detail = false;   // lower per-layer tasks (trace detail); otherwise chunks are composed analytically
};

// Pure function: thread-safe, no globals, same inputs → bit-identical outputs.
StepReport evaluate(const Scenario& sc, const EvalOptions& opt = {});

// The same, keeping its scratch memory between calls (one per thread in the sweep) and, on request, the timeline.
class Evaluator {
public:
  Evaluator();
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;
  StepReport run(const Scenario& sc, const EvalOptions& opt = {});
  // After run(): the executed step, its costs and the memory counter samples (for the trace).
  const ExecutedStep& executed() const;
  const StepCosts& costs() const;
  const std::vector<MemorySample>& memory_samples() const;

private:
  StepReport simulate(const Scenario& sc, const EvalOptions& opt);  // one full event simulation
  struct State;
  std::unique_ptr<State> st_;
};

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
  // Framework options (defaults documented in the README): DDP bucket size, Megatron-Core overlap switches.
  double bucket_mb = 0;             // MB (1e6 bytes); 0 = the stack's default (resolved_bucket_bytes)
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;
  int tp_comm_overlap = -1;         // -1 = the stack's default, 0 off, 1 on
  std::string stack = "auto";       // auto | megatron | pytorch
  bool overlap_p2p = true;
  bool fsdp_no_sync = false;
  std::string attention = "flash";  // flash | unfused
};
Scenario make_scenario(const ScenarioArgs& a);
// The framework options of ScenarioArgs (stack, buckets, overlap switches, attention) into TrainingConfig; shared by
// make_scenario() and the sweep so that both build identical settings.
void apply_framework_options(const ScenarioArgs& a, TrainingConfig& t);

}  // namespace parsim
