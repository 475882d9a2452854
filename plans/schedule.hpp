// parsim plans/ — pipeline schedules as data: for each stage, the order of its passes, plus what the rest of parsim
// needs to know about a schedule (ScheduleTraits). Nothing outside schedule.cpp switches on Schedule.
//
// A new schedule: a Schedule value (plans/training.hpp), its generator and traits row in schedule.cpp. A schedule that
// splits the backward emits BackwardInput (B, the input gradient) and BackwardWeight (W, the weight gradient) passes
// instead of Backward; the lowering (sim/step/lower/) places them as separate passes with the split costs.
#pragma once
#include "plans/training.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace parsim {

struct PipeOp {
  // Forward; Backward = input and weight gradients in one pass (GPipe, 1F1B, interleaved); BackwardInput (B) and
  // BackwardWeight (W) = the two halves, for schedules that place them apart (Qi et al. 2024, zero-bubble §2).
  enum Kind : std::uint8_t { Forward, Backward, BackwardInput, BackwardWeight } kind;
  int microbatch;
  int chunk;  // model chunk on this stage, 0..vpp-1 (virtual stage = chunk·pp + stage)
};
using ScheduleOrder = std::vector<std::vector<PipeOp>>;  // [stage] = the compute order on that stage

struct ScheduleTraits {
  Schedule schedule;
  const char* name;                  // the --schedule value
  std::vector<std::string> aliases;  // also accepted by parse_schedule
  const char* source;
  bool uses_vpp;                 // needs vpp > 1 (virtual stages); otherwise needs vpp == 1
  bool microbatches_multiple_of_pp;  // m % pp == 0 (Megatron-Core interleaving with G = pp)
  bool splits_backward;          // emits BackwardInput / BackwardWeight instead of Backward
  bool periodic;                 // every micro-batch repeats the steady state: evaluate() may simulate 2p and 3p
                                 // micro-batches and extend (sim/step/evaluate.cpp); false when memory or order
                                 // grows with m (GPipe)
  bool in_sweep_by_default;      // the sweep enumerates it without --schedule
  ScheduleOrder (*order)(int pp, int vpp, int microbatches);  // the generator; arguments already checked
};

// Every schedule, in the order the sweep enumerates them.
const std::vector<ScheduleTraits>& all_schedule_traits();
const ScheduleTraits& schedule_traits(Schedule s);  // throws InputError for Auto (resolve it first)

// The order of passes on every stage. Contract (tests/plans/test_schedule.cpp, run over every schedule): on every
// stage each (microbatch, chunk) runs its forward once and its backward once — as one Backward or as one B and one W —
// forward before B before W; replayed with the pipeline's data dependencies the orders never deadlock.
ScheduleOrder pipeline_schedule(Schedule s, int pp, int vpp, int microbatches);

}  // namespace parsim
