// parsim sim/sweep — search the plan space: every valid plan for N GPUs, evaluated in parallel, ranked.
//
// Three separate parts (Timeloop's MapSpace / SearchAlgorithm / Engine):
//   space      plans/enumerate_space(): the candidates, in a deterministic order (plans/space.cpp documents it);
//   evaluator  evaluate_candidate(): a cheap closed-form memory pre-check (estimate_memory, a lower bound of the
//              simulated peak, so it never rejects a plan that fits), then the event simulation; every outcome —
//              fits, out of memory, error — comes back as data with a reason, never as an exception across threads;
//   search     run_sweep(): exhaustive over this shard's candidates with TBB, then a total-order ranking and the
//              Pareto front of step time vs memory, so the output is identical for any thread count.
#pragma once
#include "plans/plan.hpp"
#include "sim/step/evaluate.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace parsim {

// What was searched: fixed inputs (a ScenarioInput whose plan, mbs, recompute, sp and schedule the space varies), the
// GPU count and the filters.
struct SweepSetup {
  ScenarioInput base;  // model, gpu, gpus_per_node, seq, gbs (0 = sweep_default_gbs), precision, framework options
  int gpus = 0;
  SpaceFilter filter;
  // The software stacks compared (`--stack megatron,pytorch`). A sweep never switches stacks on its own: empty = one
  // stack, base.train.stack, or Megatron when that is auto (then fsdp/zero2/zero3/hsdp are Megatron-FSDP, not
  // PyTorch's FSDP/DeepSpeed — see sweep_stacks). Every result names its stack.
  std::vector<Stack> stacks;
};
// The stacks a sweep evaluates (SweepSetup::stacks).
std::vector<Stack> sweep_stacks(const SweepSetup& setup);

struct SweepOptions {
  int threads = 0;                                // 0 = TBB's default (all hardware threads)
  int shard_index = 0, shard_count = 1;           // evaluate candidates i with i mod count == index
  std::atomic<std::int64_t>* progress = nullptr;  // incremented once per evaluated candidate (progress bar)
  std::atomic<std::int64_t>* progress_total = nullptr;  // set to the shard's candidate count once enumerated
  // Time-to-train and cost per result (--tokens, --price-per-gpu-hour, --goodput); tokens = 0: none.
  double tokens = 0, price_per_gpu_hour = 0, goodput = 1;
};

enum class Verdict : std::uint8_t { Fits, OutOfMemoryPrecheck, OutOfMemory, Error };
std::string to_string(Verdict v);  // "fits", "out of memory (pre-check)", "out of memory (simulated)", "error"

// One evaluated plan with its settings and the numbers a user ranks by (typed; sim/present writes and reads it through
// one field table).
struct PlanResult {
  Plan plan;
  std::int64_t seq = 0, gbs = 0, mbs = 1;
  Recompute recompute = Recompute::None;
  Schedule schedule = Schedule::OneFOneB;
  Precision precision = Precision::BF16;
  Stack stack = Stack::Megatron;  // the software stack this plan was evaluated with
  bool sp = false;
  Verdict verdict = Verdict::Fits;
  std::string reason;  // why it is not feasible (empty when it fits)
  double step_time_s = 0, mfu = 0, hfu = 0, tflops_per_gpu = 0, tokens_per_s = 0, bubble_fraction = 0;
  double exposed_comm_s = 0;
  PerAxis<double> exposed_by_kind_s{};
  double peak_gib = 0, allocated_peak_gib = 0, capacity_gib = 0;
  double required_gib = 0;  // what the fit verdict compares with the capacity (MemoryReport::required_gib)
  bool fits = false;
  // The largest loss: "bubble" (bubble_fraction × step) or the exposed communication of one kind ("tp comm", …).
  std::string main_loss;
  double main_loss_fraction = 0;  // of the step time
  bool has_train = false, has_cost = false;
  double train_days = 0, gpu_hours = 0, cost_usd = 0;
};

// Total order used for ranking: step time, then peak memory, then the plan's identity (plan string, mbs, recompute,
// sp, schedule, stack, compared as text) — independent of thread count and of which shard found the plan.
bool ranks_before(const PlanResult& a, const PlanResult& b);
// Pareto front of (step time, peak memory) over `ranked` (already sorted by ranks_before): plans no other plan beats
// on both. Returned fastest first (and so with strictly falling memory).
std::vector<PlanResult> pareto_front(const std::vector<PlanResult>& ranked);

// Evaluates one candidate: `sc` carries the model, hardware, plan and settings; `ev` is the caller's (per-thread)
// evaluator. Never throws for a bad candidate: InputError and other exceptions become Verdict::Error with the message.
PlanResult evaluate_candidate(const Scenario& sc, Evaluator& ev, const SweepOptions& opt, bool* simulated);

struct SweepReport {
  // Identity of the sweep (merge checks that shards agree on it).
  std::string model, gpu;
  int gpus = 0, gpus_per_node = 0;
  std::int64_t seq = 0, gbs = 0;
  std::string precision;
  std::string space;  // the filters as text ("" = the whole space)
  std::vector<std::string> base_flags;  // `parsim predict` flags shared by every result (sweep_base_flags)
  int shard_index = 0, shard_count = 1;
  std::vector<int> shards;              // the shard indices this report covers (one, or several after a merge)
  // Counts: every candidate of this shard / those that reached the simulation / those that fit.
  std::int64_t evaluated = 0, simulated = 0, feasible = 0;
  std::map<std::string, std::int64_t> rejected;  // reason → count, for the plans that do not fit or failed
  std::vector<PlanResult> ranked;                // feasible plans, fastest first (ranks_before)
  std::vector<PlanResult> pareto;                // pareto_front(ranked)
  bool complete = true;      // ranked holds every feasible plan (false when only a top-K list was read back)
  bool counts_known = true;  // false when merged from CSV, which has rows but no counts
  // How long it took (not part of the results; differs run to run).
  double wall_s = 0, cpu_s = 0;
  int threads = 0;
};

// Enumerates, shards, evaluates in parallel, ranks. Throws InputError for bad inputs (unknown model, GPU, a filter
// that leaves no plan at all, a bad shard).
SweepReport run_sweep(const SweepSetup& setup, const SweepOptions& opt);

// The base TrainingConfig of a sweep: the input's settings with seq (the model's) and gbs (sweep_default_gbs) set; the
// space sets mbs, recompute, sp and schedule per candidate and resolve_training() the rest, as for `parsim predict`.
TrainingConfig sweep_base_training(const ScenarioInput& in, const ModelSpec& m);
// The `parsim predict` flags that reproduce one result, written by the scenario option table: sweep_base_flags (the
// fixed inputs that differ from their defaults; model and GPU always) followed by result_flags (the per-row options:
// plan, seq, gbs, mbs, recompute, sp, precision, schedule).
std::vector<std::string> sweep_base_flags(const ScenarioInput& in);
std::vector<std::string> result_flags(const PlanResult& r);

// What to list (the output is sim/present/sweep_io.hpp).
struct SweepListing {
  int top = 10;      // results listed (ranked prefix)
  bool all = false;  // list every feasible plan
};

// Combines shard reports of one sweep into one ranking. Throws InputError when the shards belong to different
// sweeps or a shard appears twice, and — unless `partial` — when a shard of the sweep is missing or an input is CSV
// (which records neither its shard nor its counts, so completeness cannot be checked). With `partial` the result
// says what it is: `complete` false when shards are missing, `counts_known` false with CSV.
SweepReport merge_sweeps(const std::vector<SweepReport>& shards, const std::vector<std::string>& names,
                         bool partial = false);

}  // namespace parsim
