// parsim plans/ — pipeline schedules as data: for each stage, the order of its passes, where the model's pieces sit
// (PipelinePlacement), and what the rest of parsim needs to know about a schedule (ScheduleTraits). Nothing outside
// schedule.cpp switches on Schedule.
//
// A new schedule: a Schedule value (plans/training.hpp), its generator and traits row in schedule.cpp. A schedule that
// splits the backward emits BackwardInput (B, the input gradient) and BackwardWeight (W, the weight gradient) passes
// instead of Backward — for every micro-batch or only some (DualPipe) —; the lowering (sim/step/lower/) places them as
// separate passes with the split costs. A forward marked overlapped_with_next runs as one F&B pair with the backward
// that follows it (DualPipe): each pass hides its in-pass communication behind the other's compute.
#pragma once
#include "plans/training.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace parsim {

struct PipeOp {
  // Forward; Backward = input and weight gradients in one pass (GPipe, 1F1B, interleaved); BackwardInput (B) and
  // BackwardWeight (W) = the two halves, for schedules that place them apart (Qi et al. 2024, zero-bubble §2).
  enum Kind : std::uint8_t { Forward, Backward, BackwardInput, BackwardWeight } kind;
  int microbatch;
  int chunk;  // model chunk on this stage, 0..chunks-1 (its virtual stage: PipelinePlacement::vstage)
  // A forward that runs as one overlapped F&B pair with the next op of its stage, a backward (or B) of another
  // micro-batch (DeepSeek-V3 report §3.2.1, DualPipe's _forward_backward_chunk): the pair starts when both inputs are
  // there, and each pass's communication hides behind the other's compute.
  bool overlapped_with_next = false;
};
using ScheduleOrder = std::vector<std::vector<PipeOp>>;  // [stage] = the compute order on that stage

// Where the model's virtual stages (the pp·vpp pieces of plans/plan.hpp layers_per_chunk, in layer order) sit.
//   Looped        virtual stage c·pp + s is chunk c of stage s (GPipe, 1F1B, interleaved, ZB-H1/H2): a micro-batch
//                 loops over the stages vpp times.
//   VShape        two chunks per stage: chunk 0 of stage s is virtual stage s, chunk 1 is 2·pp − 1 − s (ZB-V, Qi et al.
//                 2024 §6; DualPipeV): a micro-batch goes down the stages and back up, so stage 0 holds the embedding
//                 and the loss.
//   Bidirectional pp virtual stages, each held twice (DualPipe, DeepSeek-V3 report §3.2.1): chunk 0 of stage s is
//                 virtual stage s, chunk 1 is a copy of virtual stage pp − 1 − s. Micro-batches of direction 0 (the
//                 first half) enter at stage 0 and use chunk 0; those of direction 1 enter at the last stage and use
//                 chunk 1.
enum class Placement : std::uint8_t { Looped, VShape, Bidirectional };
struct StageChunk {
  int stage, chunk;
};
struct PipelinePlacement {
  Placement kind = Placement::Looped;
  int pp = 1;
  int chunks = 1;  // model chunks held per stage
  // Virtual stages = the layer split (plans/plan.hpp layers_per_chunk(layers, pp, vpp) has one entry per virtual
  // stage): pp·chunks, or pp for the bidirectional placement (whose second chunk is a copy).
  int virtual_stages() const { return kind == Placement::Bidirectional ? pp : pp * chunks; }
  int vstage(int stage, int chunk) const {
    switch (kind) {
      case Placement::VShape: return chunk == 0 ? stage : 2 * pp - 1 - stage;
      case Placement::Bidirectional: return chunk == 0 ? stage : pp - 1 - stage;
      case Placement::Looped: break;
    }
    return chunk * pp + stage;
  }
  // The direction a chunk serves (0 except for the bidirectional placement's second chunk).
  int direction(int chunk) const { return kind == Placement::Bidirectional ? chunk : 0; }
  // The direction of micro-batch `mb` of `m`: the bidirectional placement feeds the first m/2 from stage 0 and the
  // rest from the last stage.
  int direction_of(int mb, int m) const { return kind == Placement::Bidirectional && 2 * mb >= m ? 1 : 0; }
  // The (stage, chunk) that runs virtual stage `vs` for micro-batches of `dir`.
  StageChunk locate(int vs, int dir) const {
    switch (kind) {
      case Placement::VShape: return vs < pp ? StageChunk{vs, 0} : StageChunk{2 * pp - 1 - vs, 1};
      case Placement::Bidirectional: return dir == 0 ? StageChunk{vs, 0} : StageChunk{pp - 1 - vs, 1};
      case Placement::Looped: break;
    }
    return StageChunk{vs % pp, vs / pp};
  }
  // Whether a chunk serves micro-batch `mb` of `m` (every chunk does, except under the bidirectional placement).
  bool serves(int chunk, int mb, int m) const { return direction(chunk) == direction_of(mb, m); }
};

// How many model chunks a plan's vpp asks for, per schedule.
enum class VppRule : std::uint8_t {
  One,       // vpp must be 1
  AboveOne,  // vpp > 1: vpp chunks per stage (interleaved)
  Two,       // vpp must be 2: two chunks per stage (V-shape)
};

struct ScheduleTraits {
  Schedule schedule;
  const char* name;                  // the --schedule value
  std::vector<std::string> aliases;  // also accepted by parse_schedule
  const char* source;
  VppRule vpp;
  Placement placement;
  int parameter_copies;              // copies of a stage's parameters each rank holds: 2 for DualPipe
  bool microbatches_multiple_of_pp;  // m % pp == 0 (Megatron-Core interleaving with G = pp)
  int min_microbatches_per_pp;       // m ≥ this · pp (the DualPipe family: 2); 0 = no minimum
  bool even_pp;                      // pp even (DualPipe: pp/2 pairs of mirrored stages)
  bool even_microbatches;            // m even (DualPipe: m/2 micro-batches each way)
  bool splits_backward;              // emits BackwardInput / BackwardWeight (for some or all micro-batches)
  bool overlaps_forward_backward;    // emits F&B pairs (PipeOp::overlapped_with_next)
  OptimizerSync optimizer_sync;      // what --optimizer-sync auto means for it
  // Every micro-batch repeats the steady state: evaluate() may simulate g·pp and (g+1)·pp micro-batches and extend
  // linearly (sim/step/analysis/steady_state.cpp), g = steady_groups — past the warm-up transients of the real-cost
  // timeline (the V-shape and DualPipe orders settle later: 3); 0 = never (GPipe: memory grows with m). Exactness
  // against full simulation is tested per schedule in tests/step.
  int steady_groups;
  bool in_sweep_by_default;      // the sweep enumerates it without --schedule
  ScheduleOrder (*order)(int pp, int vpp, int microbatches);  // the generator; arguments already checked
};

// Every schedule, in the order the sweep enumerates them.
const std::vector<ScheduleTraits>& all_schedule_traits();
const ScheduleTraits& schedule_traits(Schedule s);  // throws InputError for Auto (resolve it first)
// The placement of a schedule for a plan's pp and vpp (chunks per stage from the traits' VppRule and placement).
PipelinePlacement pipeline_placement(Schedule s, int pp, int vpp);
// Whether `vpp` fits the schedule's VppRule.
bool vpp_fits(const ScheduleTraits& t, int vpp);
// The first precondition of the schedule that (pp, vpp, m) breaks, as the contract's one-line message (no
// "parsim: error:" prefix), or nothing.
std::optional<std::string> schedule_precondition_error(const ScheduleTraits& t, int pp, int vpp, std::int64_t m);
// The --optimizer-sync in effect: Auto resolves to the schedule's traits.
OptimizerSync effective_optimizer_sync(const TrainingConfig& t);

// The order of passes on every stage. Contract (tests/plans/test_schedule.cpp, run over every schedule): on every
// stage each (micro-batch, chunk) that the chunk serves runs its forward once and its backward once — as one Backward
// or as one B and one W — forward before B before W; a forward marked overlapped_with_next is followed by a backward of
// another micro-batch; replayed with the pipeline's data dependencies the orders never deadlock.
ScheduleOrder pipeline_schedule(Schedule s, int pp, int vpp, int microbatches);

// The last few schedules generated (pipeline_schedule is a pure function of its arguments), for callers that ask for
// the same ones again and again: one sweep evaluator's lowering and memory pre-check share one.
class ScheduleCache {
public:
  // pipeline_schedule(s, pp, vpp, microbatches), generated on a miss (and throwing as it does); the reference stays
  // valid until the cache is asked for kEntries other keys.
  const ScheduleOrder& get(Schedule s, int pp, int vpp, int microbatches);

private:
  static constexpr std::size_t kEntries = 6;
  struct Entry {
    Schedule schedule{};
    int pp = 0, vpp = 0, microbatches = 0;
    ScheduleOrder order;  // empty: unused
  };
  std::array<Entry, kEntries> entries_{};
  std::size_t next_ = 0;
};

}  // namespace parsim
