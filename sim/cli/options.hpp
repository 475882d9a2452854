// Options shared by predict, validate and sweep: the scenario flags of docs/cli.md.
#pragma once
#include "sim/step/evaluate.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace parsim::cli {

// Raw strings as typed, so that every bad value gets the contract's one-line message.
struct ScenarioFlags {
  std::string model, plan, gpu = "h100", gpus_per_node, seq, gbs, mbs = "1";
  std::string recompute = "none", precision = "bf16", schedule;
  bool sp = false;
  std::string bucket_mb;  // empty = the stack's default
  bool no_overlap_grad_reduce = false, no_overlap_param_gather = false, tp_comm_overlap = false;
  bool no_tp_comm_overlap = false;
  std::string stack = "auto";
  bool fsdp_no_sync = false;
  std::string attention = "flash";
};
// Registers the flags on `app`. `with_plan` = false for the sweep (it enumerates plans).
void add_scenario_flags(CLI::App* app, ScenarioFlags& f, bool with_plan = true);
// Converts and checks the raw values (throws InputError) into ScenarioArgs for make_scenario().
ScenarioArgs to_args(const ScenarioFlags& f);

// --tokens / --price-per-gpu-hour / --goodput
struct TrainFlags {
  std::string tokens, price, goodput = "1";
};
void add_train_flags(CLI::App* app, TrainFlags& f);
struct TrainValues {
  bool enabled = false;
  double tokens = 0, price = 0, goodput = 1;
};
TrainValues to_train_values(const TrainFlags& f);

// `--format` with the given choices; throws InputError naming the valid ones.
std::string check_choice(const std::string& flag, const std::string& value, std::initializer_list<const char*> valid);

}  // namespace parsim::cli
