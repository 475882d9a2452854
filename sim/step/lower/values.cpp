// The numbers of the lowered tasks: every task's duration, NIC part, issue time, kernels, sync and bytes come from its
// Recipe (builder.hpp) through Builder::values, both when the graph is built and when a kept graph of the same shape is
// re-filled for another plan (ShapeCache) — one computation, so a re-filled graph is the graph a build would give.
#include "sim/step/analysis.hpp"
#include "sim/step/lower/builder.hpp"

#include <stdexcept>

namespace parsim::lowering {

RankParams Builder::segment_params(int lb, int le, std::uint8_t edges) const {
  // Uniform models (every dense model): one kind, n · params — the sweep's hot path skips the per-kind sums.
  RankParams rp = k_.uniform() ? k_.kinds.front().params.scaled(le - lb) : k_.range_params(lb, le);
  if (edges & kEdgeEmbedding) rp.dense += k_.embed_params;
  if (edges & kEdgeHead) rp += k_.head_stage_params();
  return rp;
}

PassCost Builder::compose(const CostRecipe& r) const {
  switch (r.kind) {
    case CostRecipe::Kind::Segment: {
      PassCost c = k_.uniform() ? k_.layer[r.pass].scaled(r.le - r.lb) : k_.range_cost(r.pass, r.lb, r.le);
      if (r.edges & kEdgeEmbedding) c += k_.embed[r.pass];
      if (r.edges & kEdgeHead) c += k_.head[r.pass];
      // Activation offloading (pp 1): a micro-batch's forward waits end with its head, its backward's with its
      // embedding (costs/offload.cpp).
      if (r.pass == PassKind::Forward && (r.edges & kEdgeHead)) c.offload_wait_s += k_.offload.fwd_wait_s;
      if (r.pass == PassKind::Backward && (r.edges & kEdgeEmbedding)) c.offload_wait_s += k_.offload.bwd_wait_s;
      if (r.alone && c.ep_overlap_s > 0) {
        // No partner pass: the exchanges the batch-level overlap would hide run exposed, and hold no partner's SMs.
        c.ep_exposed_s += c.ep_overlap_s;
        c.compute_s -= sc_.hw.gpu.compute.comm_compute_slowdown * c.ep_overlap_s;
        c.ep_overlap_s = 0;
      }
      return c;
    }
    case CostRecipe::Kind::Optimizer: {
      // Optimizer step on this rank's share of the stage's parameters: dense parameters sharded over DP×CP, expert
      // parameters over expert-DP; memory-bound.
      const RankParams sp = stage_params(k_, r.stage);
      double owned = sp.dense / std::max(1, sh_.shards_optimizer ? k_.shard_degree : 1);
      if (sp.expert > 0) owned += sp.expert / std::max(1, sh_.shards_optimizer ? k_.expert_shard_degree : 1);
      PassCost oc;
      oc.compute_s = memory_bound_time_s(sc_.hw, owned * k_.optimizer_bytes_per_param, 4);
      return oc;
    }
    case CostRecipe::Kind::Pair: break;
  }
  throw std::logic_error("lowering: an F&B pair's cost is composed with its partner, not re-composed");
}

double Builder::host_part_s(HostPart part, std::uint8_t flags) const {
  const HostModel& h = k_.host;
  switch (part) {
    case HostPart::TimerSync: {
      // --timing-log-level 2: the pass's timer syncs, all but one before it and one after it.
      if (!(flags & kTimerBefore)) return h.sync_s;
      return ((flags & kTimerForward ? h.timer_syncs_fwd : h.timer_syncs_bwd) - 1) * h.sync_s;
    }
    case HostPart::StepBegin: return h.step_begin_s;
    case HostPart::Data: return h.data_s + (h.data_sync ? h.sync_s : 0);
    case HostPart::LossSync: return h.loss_syncs * h.sync_s;
    case HostPart::PreStep: return h.grad_check_s + h.pre_step_s;
    case HostPart::PostStep: return h.post_step_s;
    case HostPart::None:
    case HostPart::P2PSync:
    case HostPart::GradCheck: break;
  }
  throw std::logic_error("lowering: no host work of this kind is lowered");
}

const GroupShape& Builder::group(DpGroup g) const {
  switch (g) {
    case DpGroup::Dp: return k_.dp_group;
    case DpGroup::ExpertDp: return k_.edp_group;
    case DpGroup::Shard: return k_.shard_group;
    case DpGroup::Replica: return k_.replica_group;
  }
  return k_.dp_group;
}

Values Builder::values(const Recipe& r) const {
  Values v;
  switch (r.kind) {
    case RecipeKind::Pass: {
      const PassCost& c = out_.costs[r.id];
      v.seconds = c.duration_s();
      // The pass's in-pass communication that crosses nodes keeps the rank's NICs busy (hidden or not): the engine
      // shares them with the DP and pipeline transfers running at the same time (StepCosts::nic_share).
      if (any_pass_nic_)
        v.nic_s = k_.nic_share[Axis::tp] * c.tp_s + k_.nic_share[Axis::cp] * c.cp_s + k_.nic_share[Axis::ep] * c.ep_s;
      v.host_s = c.host_s;
      v.kernels = c.kernels;
      return v;
    }
    case RecipeKind::Optimizer:
      v.seconds = out_.costs[r.id].compute_s;
      v.host_s = k_.stage_host_optimizer_s[static_cast<std::size_t>(r.stage)];
      v.kernels = k_.stage_host_optimizer_kernels[static_cast<std::size_t>(r.stage)];
      return v;
    case RecipeKind::Recv:
      v.seconds = k_.p2p_s;
      v.nic_s = k_.p2p_nic_s;
      v.host_s = k_.host.p2p_s;
      v.kernels = 2;  // the batched send and receive
      if (r.flags & kRecipeSync) v.sync_after_s = k_.host.sync_s;
      v.bytes = static_cast<float>(k_.p2p_bytes);
      return v;
    case RecipeKind::Host:
      v.seconds = host_part_s(static_cast<HostPart>(r.id), r.flags);
      return v;
    case RecipeKind::Dp: {
      const RankParams p = r.flags & kRecipeWholeStage ? stage_params(k_, r.stage) : segment_params(r.lb, r.le, r.edges);
      double bytes = (r.flags & kRecipeExpert ? p.expert : p.dense) *
                     (r.flags & kRecipeParamWire ? param_wire_bytes() : grad_wire_bytes());
      if (r.flags & kRecipePerShard) bytes /= k_.shard_group.size;
      const bool is_bucketed = (r.flags & kRecipeBucketed) != 0;
      const CommCost cc = is_bucketed ? bucketed(r.coll, bytes, group(r.group)) : comm(r.coll, bytes, group(r.group));
      v.seconds = cc.time;
      v.nic_s = cc.nic;
      if (r.flags & kRecipeHostColl) {
        v.host_s = k_.host.coll_s;
        v.kernels = 1;
      } else if (!(r.flags & kRecipeNoHost)) {
        const double calls = is_bucketed ? buckets(bytes) : 1.0;
        v.host_s = dp_host_s(calls);
        v.kernels = dp_kernels(calls);
      }
      v.bytes = static_cast<float>(bytes);
      return v;
    }
  }
  return v;
}

// What decides the graph's structure — tasks, streams, dependencies, host program positions, drains — besides the
// schedule's order (a function of schedule, stages, vpp and micro-batches): the data-parallel strategy and its flags,
// the layer split, the segment split (split_pass, segment_layers: the layers per bucket group), which host work exists
// and what drains, and the devices' settings. Two plans with equal keys lower to the same structure; everything else
// is a number the recipes re-compute. Not cached: explicit schedules, F&B pairs (their costs come in pairs) and models
// with mixed layer kinds or expert parameters (segments with and without expert collectives).
bool Builder::shape_key(const ScheduleOrder* explicit_order, std::vector<double>& key) const {
  if (explicit_order || !k_.uniform() || k_.has_expert_params ||
      schedule_traits(sc_.train.schedule).overlaps_forward_backward)
    return false;
  const TrainingConfig& t = sc_.train;
  const HostModel& h = k_.host;
  key.clear();
  auto b = [](bool x) { return x ? 1.0 : 0.0; };
  key.insert(key.end(), {static_cast<double>(t.schedule), static_cast<double>(P_), static_cast<double>(sc_.plan.vpp),
                         static_cast<double>(V_), static_cast<double>(M_), static_cast<double>(sc_.plan.sharding),
                         b(t.overlap_grad_reduce), b(t.overlap_param_gather), b(t.fsdp_no_sync), b(has_dp_),
                         b(sh_.hierarchical && k_.replica_group.size > 1),
                         // host work and its drains
                         b(h.megatron()), b(h.data_s > 0), b(h.data_sync), b(h.loss_syncs > 0), b(h.p2p_sync),
                         b(h.step_begin_s > 0), b(h.grad_check_s + h.pre_step_s > 0),
                         b(h.grad_check_syncs + h.pre_step_syncs > 0), b(h.post_step_s > 0), b(h.post_step_syncs > 0),
                         b(h.timer_syncs_fwd > 0), b(h.timer_syncs_bwd > 0),
                         static_cast<double>(h.launch_queue), sc_.hw.gpu.compute.comm_compute_slowdown});
  // The segment split of a pass that is split into bucket groups: ⌈bucket / layer bytes⌉ layers per group, up to the
  // largest chunk (segment_layers clamps it to the chunk's layers).
  int most = 1;
  for (int n : k_.layers_per_chunk) most = std::max(most, n);
  const double layer_bytes = k_.layer_params * grad_wire_bytes();
  key.push_back(std::clamp(std::ceil(bucket_bytes_ / std::max(1.0, layer_bytes)), 1.0, static_cast<double>(most)));
  for (int n : k_.layers_per_chunk) key.push_back(n);
  return true;
}

namespace {
std::array<std::uint64_t, 2> packed(const Recipe& r) {
  const auto u16 = [](std::int16_t x) { return static_cast<std::uint64_t>(static_cast<std::uint16_t>(x)); };
  return {static_cast<std::uint64_t>(r.kind) | static_cast<std::uint64_t>(r.coll) << 8 |
              static_cast<std::uint64_t>(r.group) << 16 | static_cast<std::uint64_t>(r.flags) << 24 |
              static_cast<std::uint64_t>(r.edges) << 32 | u16(r.stage) << 40,
          u16(r.lb) | u16(r.le) << 16 | static_cast<std::uint64_t>(r.id) << 32};
}
}  // namespace

void Builder::keep(ShapeSlot& slot) {
  ShapeCache& cache = scratch_.shapes;
  std::swap(slot.key, cache.key);
  std::swap(slot.cost_recipes, scratch_.cost_recipes);
  // Tasks share few recipes (every segment of one composition, every receive): number the distinct ones.
  const std::vector<Recipe>& all = scratch_.recipes;
  std::size_t size = 64;
  while (size < 2 * all.size()) size *= 2;
  constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
  cache.table.assign(size, {{0, 0}, kEmpty});
  slot.recipes.clear();
  slot.task_recipe.resize(all.size());
  for (std::size_t t = 0; t < all.size(); ++t) {
    const std::array<std::uint64_t, 2> k = packed(all[t]);
    std::size_t h = static_cast<std::size_t>((k[0] * 0x9E3779B97F4A7C15ull) ^ (k[1] * 0xC2B2AE3D27D4EB4Full));
    for (h = (h ^ (h >> 29)) & (size - 1);; h = (h + 1) & (size - 1)) {
      auto& e = cache.table[h];
      if (e.second == kEmpty) {
        e = {k, static_cast<std::uint32_t>(slot.recipes.size())};
        slot.recipes.push_back(all[t]);
        break;
      }
      if (e.first == k) break;
    }
    slot.task_recipe[t] = cache.table[h].second;
  }
}

void Builder::refill(const ShapeSlot& slot) {
  for (std::size_t i = 0; i < out_.costs.size(); ++i) out_.costs[i] = compose(slot.cost_recipes[i]);
  // The numbers of each distinct recipe once, then every task takes its recipe's, in the order the build added them
  // (the clock bound's running sum and its error are the build's).
  std::vector<ShapeCache::Filled>& filled = scratch_.shapes.filled;
  filled.resize(slot.recipes.size());
  for (std::size_t i = 0; i < slot.recipes.size(); ++i) {
    const Values v = values(slot.recipes[i]);
    filled[i] = ShapeCache::Filled{v.seconds,
                                   to_ns(v.seconds),
                                   v.nic_s > 0 ? to_ns(v.nic_s) : 0,
                                   to_ns(v.host_s),
                                   v.sync_after_s >= 0 ? to_ns(v.sync_after_s) : -1,
                                   kernel_count(v.kernels),
                                   v.bytes,
                                   slot.recipes[i].kind == RecipeKind::Host};
  }
  const std::size_t n = g_.num_tasks();
  for (TaskId t = 0; t < n; ++t) {
    const std::uint32_t tag = g_.tag(t);
    const ShapeCache::Filled& f = filled[slot.task_recipe[tag]];
    TaskInfo& ti = out_.info[tag];
    ti.bytes = f.bytes;
    if (!f.host_work) check_duration(f.seconds, ti);
    g_.set_values(t, f.duration, f.nic, f.host, f.kernels, f.sync_after);
  }
}

}  // namespace parsim::lowering
