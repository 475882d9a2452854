// parsim plans/ — the scenario schema: what one evaluation needs (Scenario), what a user gives for it
// (ScenarioInput, with its "auto" values), the one function that resolves those, and the declarative option table
// that every front end reads and writes it through (command line, JSON scenario files and the sim/api functions, the
// validation CSV's parsim_args, the sweep's reproduction command, the settings echo).
//
// A new training option is one row in scenario_options() (plans/scenario.cpp) plus the field it sets in
// TrainingConfig (plans/plan.hpp) — and, if it has an "auto" value, one line in resolve_training().
#pragma once
#include "plans/plan.hpp"
#include "sim/core/options.hpp"

#include <string>
#include <vector>

namespace parsim {

// The three independent, immutable inputs plus the plan: everything evaluate() needs. Built and validated once.
struct Scenario {
  ModelSpec model;
  Hardware hw;
  Plan plan;
  TrainingConfig train;
};

// A scenario as the user states it: names as typed (model preset or file, GPU preset or file, plan string) and the
// training settings with their "auto" values unresolved. Its defaults are the option table's.
struct ScenarioInput {
  std::string model, plan, gpu = "h100";
  int gpus_per_node = 0;  // 0 = the preset's
  TrainingConfig train = input_defaults();

  static TrainingConfig input_defaults() {
    TrainingConfig t;
    t.schedule = Schedule::Auto;  // interleaved when vpp > 1, else 1F1B (resolve_training)
    t.sp_auto = true;             // the stack decides (resolve_training)
    t.attention_auto = true;
    t.overlap_auto = true;
    return t;
  }
};

// The one place where "auto" settings get their values (docs/cli.md defaults; README "Software stack"):
//   seq 0            → the model's seq_len;
//   gbs 0            → default_gbs(seq, dp, mbs): ⌈4,194,304 / seq⌉ rounded up to a multiple of dp × mbs;
//   schedule Auto    → interleaved when vpp > 1, else 1F1B;
//   optimizer_sync Auto → the schedule's (ScheduleTraits::optimizer_sync: post-validation for zb-h1/zb-h2/zb-v,
//                      Qi et al. 2024 §4; a barrier otherwise);
//   stack Auto       → the sharding scheme's framework (ShardingTraits::default_stack: zero0/zero1 → Megatron,
//                      zero2/zero3/fsdp/hsdp → PyTorch);
//   sp (sp_auto)     → on for the Megatron stack when tp > 1 and tp divides the tokens per CP rank (Megatron-Core /
//                      NeMo / Megatron-Bridge recipes pair TP with sequence_parallel=True); off for MegatronLegacy
//                      (--sequence-parallel came in mid-2022 and was opt-in) and PyTorch (plain DTensor TP);
//   attention        → unfused QKᵀ/softmax/AV for MegatronLegacy (pre-FlashAttention), flash otherwise;
//   overlaps         → gradient-reduce and parameter-gather overlap off for MegatronLegacy (LocalDDP all-reduced after
//                      the backward), as given otherwise (default on: NeMo/Megatron-Bridge DDP configs);
//   tp_comm_overlap  → off: Megatron-LM's own default (--tp-comm-overlap is opt-in, arguments.py); recipes that enable
//                      TE userbuffers say so with --tp-comm-overlap. Never hides TP traffic that crosses nodes
//                      (sim/step/costs/comm.cpp add_tp_comm: userbuffers need NVLink/IPC peers);
//   bucket_bytes 0   → Megatron-Core max(40M, 1M × DP×CP size) elements of the gradient wire type
//                      (distributed_data_parallel_config.py bucket_size); off Megatron the scheme's framework
//                      bucket (ShardingTraits::bucket_elements: DeepSpeed ZeRO-2 5e8 elements) or PyTorch DDP 25 MB
//                      (bucket_cap_mb).
// Idempotent: a resolved config comes back unchanged. Throws InputError for values default_gbs rejects.
TrainingConfig resolve_training(const Plan& p, const ModelSpec& m, TrainingConfig t);
// True when no field holds an "auto" value (what the simulator requires; Evaluator resolves a copy otherwise).
bool is_resolved(const TrainingConfig& t);

// The collective-library environment the framework sets for a run: Megatron's --deterministic-mode runs NCCL with
// NCCL_ALGO=Ring (megatron/training/arguments.py validate_args requires NCCL_ALGO in {Tree, Ring, CollnetDirect,
// CollnetChain, ^NVLS} and megatron/core set_deterministic_algorithms sets "Ring" when it is not; NVIDIA's Megatron-LM
// CI model_config.yaml files of the deterministic tests set ENV_VARS NCCL_ALGO: Ring): every NCCL collective runs the
// ring algorithm — no NVLS, tree or PAT — whatever the hardware file enables (point-to-point traffic is unaffected).
// Applied by resolve_scenario() and the sweep once the training settings are known.
void apply_framework_collectives(Hardware& hw, const TrainingConfig& t);

// Training options the hardware cannot run (throws InputError with the contract's one-line message): --attention
// cudnn on an AMD GPU (no cuDNN). Checked by resolve_scenario() and the sweep once hardware and settings are known.
void check_training_on_hardware(const Hardware& hw, const TrainingConfig& t);

// Loads the model and hardware, parses the plan, resolves the settings and validates the whole (throws InputError with
// the contract's one-line messages).
Scenario resolve_scenario(const ScenarioInput& in);

// The scenario options (docs/cli.md "parsim [predict]"): model, plan, gpu, gpus_per_node, seq, gbs, mbs, recompute,
// sp, precision, schedule, optimizer_sync, stack, bucket_mb, the overlap switches, attention, fsdp_no_sync. Use bits: kUsePredict
// (predict and validate), kUseSweep (the sweep takes it as a fixed input), kUsePerRow (the sweep varies or reports it
// per result).
const OptionTable<ScenarioInput>& scenario_options();
// Throws InputError for contradictory pairs among scenario option values (--tp-comm-overlap with
// --no-tp-comm-overlap, --sp with --no-sp).
void check_scenario_conflicts(const std::vector<OptionValue>& values);
// Applies (key, text) pairs to `in` after check_scenario_conflicts.
void apply_scenario_options(const std::vector<OptionValue>& values, ScenarioInput& in);
// A scenario JSON object (keys = scenario_options keys, e.g. {"model": "llama3-8b", "plan": "tp2dp32", "seq": 8192,
// "sp": true}) applied to `in`; `where` names the source in messages. Unknown keys are errors.
void apply_scenario_json(const nlohmann::json& j, const std::string& where, ScenarioInput& in);
// A predict flag string ("--model llama7b --plan tp8pp2dp4 --seq 4096 --sp", split on whitespace), as in the validation
// CSV's parsim_args (there with allow_model = false: the model comes from the row's JSON). Throws InputError
// prefixed with `where`.
ScenarioInput scenario_from_flag_string(const std::string& flags, const std::string& where, bool allow_model = true);
// The settings of a (resolved) TrainingConfig as the option table's JSON keys: seq, gbs, mbs, recompute, sp,
// precision, schedule, stack, bucket_mb, the overlap switches, attention, fsdp_no_sync.
nlohmann::ordered_json training_to_json(const TrainingConfig& t);

}  // namespace parsim
