// parsim sim/step — per-pass costs of one training step, by concern:
//   costs/layer.cpp   one transformer layer's compute (GEMMs, attention, elementwise, fp8 casts, recompute), with the
//                     backward split into its input-gradient (dgrad) and weight-gradient (wgrad) halves;
//   costs/comm.cpp    the communication issued inside a pass (TP all-reduces / all-gathers / reduce-scatters, the CP
//                     ring) and the pipeline's point-to-point transfer;
//   costs/edges.cpp   the embedding and the LM head + loss, and WHERE they sit (edge_work: the one placement rule);
//   costs/step.cpp    compute_step_costs(): the composition, parameters per rank, data-parallel groups.
#pragma once
#include "plans/scenario.hpp"

#include <cstdint>
#include <vector>

namespace parsim {

// Cost of one pass (forward, backward, or a backward half) of some layers on one rank. TP and CP communication is
// issued inside the layer (Megatron runs it synchronously between GEMMs), so its exposed part lengthens the pass on
// the compute stream.
struct PassCost {
  double compute_s = 0;
  double tp_s = 0, tp_exposed_s = 0;
  double cp_s = 0, cp_exposed_s = 0;
  double ep_s = 0, ep_exposed_s = 0;  // expert-parallel all-to-all inside MoE layers (0 until they are simulated)
  double duration_s() const { return compute_s + tp_exposed_s + cp_exposed_s + ep_exposed_s; }
  PassCost& operator+=(const PassCost& o);
  PassCost operator-(const PassCost& o) const;
  PassCost scaled(double k) const;
};

// The kinds of pass a schedule places (plans/plan.hpp PipeOp): forward, the combined backward, and the backward's two
// halves for schedules that split it (zero-bubble: B = input gradient, W = weight gradient).
enum class PassKind : std::uint8_t { Forward = 0, Backward = 1, BackwardInput = 2, BackwardWeight = 3 };
constexpr int kPassKinds = 4;

// The four costs of one piece of the model (a layer, the embedding, the head) by pass kind.
struct PassCosts {
  PassCost fwd, bwd, bwd_input, bwd_weight;
  const PassCost& operator[](PassKind k) const {
    switch (k) {
      case PassKind::Forward: return fwd;
      case PassKind::Backward: return bwd;
      case PassKind::BackwardInput: return bwd_input;
      case PassKind::BackwardWeight: return bwd_weight;
    }
    return fwd;
  }
};

// Where the embedding and the LM head + loss sit in a pass (the one placement rule, costs/edges.cpp): the embedding on
// the first virtual stage, before its first layer in the forward and after its last layer in the backward; the head on
// the last virtual stage, after its last layer forward and before its first layer backward. A pass split into
// segments carries them on the segment that touches that end.
struct EdgeWork {
  bool embedding = false, head = false;
};
// `vstage` of `vstages` virtual stages; `first_segment`/`last_segment`: whether this segment is the first/last one
// the pass runs (a backward runs its layers last to first). Inline: the lowering and the memory pre-check call it per
// pass.
inline EdgeWork edge_work(int vstage, int vstages, bool forward, bool first_segment, bool last_segment) {
  // Forward: embedding before the first layer, LM head after the last. Backward: the reverse (head first).
  EdgeWork e;
  e.embedding = vstage == 0 && (forward ? first_segment : last_segment);
  e.head = vstage == vstages - 1 && (forward ? last_segment : first_segment);
  return e;
}

// An F&B pair (DualPipe, DeepSeek-V3 report §3.2.1: "overlap the computation and communication within a pair of
// individual forward and backward chunks"): the in-pass communication of each pass (TP, CP, EP — what PassCost
// counts as exposed) runs while the other pass computes, so it is hidden up to the other's compute time; while it
// runs, the communication kernels take SMs from that compute (the device's comm_compute_slowdown, as the engine
// charges for communication streams). How one pass of the pair changes, applied to each of its segments:
struct PairOverlap {
  double keep_exposed = 1;   // factor on its exposed communication (what the partner's compute does not hide)
  double compute_scale = 1;  // factor on its compute (SM contention from the partner's hidden communication)
  PassCost apply(const PassCost& c) const;
};
// The two passes' whole costs → how each changes (first for `a`, second for `b`).
std::pair<PairOverlap, PairOverlap> overlap_pair(const PassCost& a, const PassCost& b, double comm_compute_slowdown);

// Everything the lowering needs, computed once per scenario from the cost models.
struct StepCosts {
  PassCosts layer;                    // one transformer layer, one micro-batch (bwd includes recompute)
  PassCosts embed;                    // first virtual stage (embedding lookup; its gradient is a weight gradient)
  PassCosts head;                     // last virtual stage: final norm, LM head, loss
  double p2p_s = 0;                   // one activation (or gradient) transfer between adjacent pipeline stages
  double p2p_bytes = 0;
  std::vector<int> layers_per_chunk;  // pp·vpp pieces, index = virtual stage (PipelinePlacement::vstage)
  PipelinePlacement placement;        // where the virtual stages sit (the schedule's)
  // Parameters held per rank (after TP split), for gradient/parameter traffic and the optimizer.
  double layer_params = 0, embed_params = 0, head_params = 0;
  // Data-parallel group (DP×CP: gradients reduce over both, Megatron-Core) and HSDP sub-groups. A schedule with two
  // parameter copies (DualPipe) reduces each copy's gradients together with its mirror stage's: the group doubles.
  GroupShape dp_group, shard_group, replica_group;
  int shard_degree = 1;               // ZeRO/FSDP sharding degree of optimizer state
  double optimizer_bytes_per_param = 0;  // HBM bytes the optimizer step moves per owned parameter
};
StepCosts compute_step_costs(const Scenario& sc);

// ---- the pieces (internal to compute_step_costs; exposed for the derived-number tests) ----
struct CostContext {
  const Scenario& sc;
  const Hardware& hw;             // the stack's kernels (megatron_compute for Megatron-Core)
  GroupShape tp_group, cp_group;
  bool tp_overlap;
};
// A collective on a group; 0 for a group of one.
double group_collective_s(const CostContext& c, Collective k, double bytes, const GroupShape& g);
// Adds `total` TP communication to a pass; with TE userbuffer overlap it hides behind `overlappable_s` of GEMM time
// except for the first chunk (≈ 1/tp, at least 1/2).
void add_tp_comm(const CostContext& c, PassCost& p, double total, double overlappable_s);
// One activation tensor of a micro-batch on one rank: b·(s/cp)·h elements (domain-notes §6).
double activation_bytes(const Scenario& sc);
// One layer: compute, TP/CP communication, recompute.
PassCosts layer_costs(const CostContext& c);
// Embedding and LM head + loss.
void edge_costs(const CostContext& c, PassCosts& embed, PassCosts& head);
// One pipeline transfer (s) and its bytes.
std::pair<double, double> p2p_cost(const CostContext& c);

}  // namespace parsim
