// Data parallelism with each framework's semantics under gradient accumulation (domain-notes §6): one lowering
// function per DataParallelLowering strategy of plans/sharding.hpp, then the optimizer step they all end in.
//   BucketedOnce (zero0, zero1) — DDP / Megatron: bucketed reduction (all-reduce; reduce-scatter for the distributed
//       optimizer) of the gradients as the LAST micro-batch's backward produces them; ZeRO-1's all-gather of the
//       updated 16-bit parameters overlapped with the next step's first forward (--overlap-param-gather);
//   ReduceScatterEachMicrobatch (zero2) — DeepSpeed: reduce-scatter after every micro-batch's backward; all-gather
//       after the optimizer step;
//   ShardedParameters (zero3, fsdp, hsdp) — per-layer all-gather of the parameters before each forward and again
//       before each backward of every micro-batch (one layer of prefetch), reduce-scatter of the gradients after each
//       layer's backward (every micro-batch unless no_sync); hsdp: the same inside the shard group, then an
//       all-reduce of the gradient shard across replicas.
// With a split backward the gradients are complete after W and the parameters are read by F and B. "The last
// micro-batch" is the one whose weight-gradient pass completes the chunk's gradients in the stage's order (M − 1,
// except under DualPipe, whose chunks serve one direction each).
#include "sim/step/analysis.hpp"
#include "sim/step/lower/builder.hpp"

#include <algorithm>

namespace parsim::lowering {

TaskInfo Builder::dp_info(TaskKind kind, Collective c, int stage, int chunk, int mb, const Segment& sg) const {
  return TaskInfo{kind, Axis::dp, c, static_cast<std::int16_t>(stage), static_cast<std::int16_t>(chunk), mb,
                  static_cast<std::int16_t>(sg.layer_begin), static_cast<std::int16_t>(sg.layer_end), 0.0f, kNoTask,
                  kNoTask};
}

// `dense`: the recipe of the segment's dense collective (its wire bytes and bucketing); the expert part is not issued
// by the host on its own (it rides with the dense call).
TaskId Builder::expert_dp_task(TaskKind kind, Collective c, int stage, int chunk, int mb, const Segment& sg,
                               const Recipe& dense) {
  if (sg.expert_params <= 0 || k_.edp_group.size <= 1) return kNoTask;
  Recipe r = dense;
  r.group = DpGroup::ExpertDp;
  r.flags = static_cast<std::uint8_t>((dense.flags & (kRecipeParamWire | kRecipeBucketed | kRecipeWholeStage)) |
                                      kRecipeExpert | kRecipeNoHost);
  Values v;
  return add(out_.dp_stream[stage], r, dp_info(kind, c, stage, chunk, mb, sg), v);
}

void Builder::dp_bucketed_once(int stage, std::vector<TaskId>& grad_tasks) {
  const auto dps = out_.dp_stream[stage];
  const Collective red = sh_.grad_collective;
  // ZeRO-1 with overlapped parameter gather: the previous step's all-gathers run first, ahead of each forward.
  if (sh_.gather_overlaps_next_forward && sc_.train.overlap_param_gather) {
    for (const PipeOp& op : sched()[stage]) {
      if (op.kind != PipeOp::Forward || op.microbatch != first_forward_mb(stage, op.chunk)) continue;
      const PassRef& r = pass(stage, op);
      for (std::uint32_t i = 0; i < r.count; ++i) {
        const Segment& sg = segs_[r.first + i];
        const Recipe rc = dp_recipe(Collective::AllGather, DpGroup::Dp, sg, kRecipeParamWire | kRecipeBucketed);
        Values v;
        const TaskId ag = add(dps, rc, dp_info(TaskKind::ParamGather, Collective::AllGather, stage, op.chunk,
                                               op.microbatch, sg), v);
        issue(ag, v, sg.key - 4);
        g_.add_dep(ag, sg.task);
        const TaskId eag = expert_dp_task(TaskKind::ParamGather, Collective::AllGather, stage, op.chunk, 0, sg, rc);
        if (eag != kNoTask) g_.add_dep(eag, sg.task);
      }
    }
  }
  // Without --overlap-grad-reduce every bucket waits for the stage's last weight-gradient pass (all chunks done), and
  // the host issues the reductions only then: Megatron calls finish_grad_sync() (legacy: allreduce_gradients()) after
  // the whole forward-backward schedule has been issued. Issuing a chunk's reductions right after its own last
  // backward — the same position as with overlap, but in the middle of the program under interleaving — is not a
  // program a process could run, and with enough kernels after it the engine deadlocked: the reduction waits on the
  // GPU for the stage's last backward, the host blocks on a full launch queue until the reduction starts, and so never
  // issues that backward (tests/step/test_deadlock.cpp).
  TaskId last_backward = 0;
  std::uint64_t last_backward_key = 0;
  if (!sc_.train.overlap_grad_reduce) {
    for (const PipeOp& op : sched()[stage]) {
      if (!makes_weight_grads(op.kind)) continue;
      const PassRef& r = pass(stage, op);
      last_backward = segs_[r.first + r.count - 1].task;
      last_backward_key = segs_[r.first + r.count - 1].key;
    }
  }
  for (const PipeOp& op : sched()[stage]) {
    if (!makes_weight_grads(op.kind) || op.microbatch != last_wgrad_mb(stage, op.chunk)) continue;
    const PassRef& r = pass(stage, op);
    for (std::uint32_t i = 0; i < r.count; ++i) {
      const Segment& sg = segs_[r.first + i];
      const Recipe rc = dp_recipe(red, DpGroup::Dp, sg, kRecipeBucketed);
      Values v;
      const TaskId t = add(dps, rc, dp_info(TaskKind::GradReduce, red, stage, op.chunk, op.microbatch, sg), v);
      // (equal keys keep the call order: the chunks' reductions in the order their last backward ran)
      issue(t, v, sc_.train.overlap_grad_reduce ? sg.key + 1 : last_backward_key + 1);
      g_.add_dep(sc_.train.overlap_grad_reduce ? sg.task : last_backward, t);
      grad_tasks.push_back(t);
      const TaskId et = expert_dp_task(TaskKind::GradReduce, red, stage, op.chunk, M_ - 1, sg, rc);
      if (et != kNoTask) grad_tasks.push_back(et);
    }
  }
}

void Builder::dp_reduce_scatter_each_microbatch(int stage, std::vector<TaskId>& grad_tasks) {
  const auto dps = out_.dp_stream[stage];
  const Collective red = sh_.grad_collective;
  for (const PipeOp& op : sched()[stage]) {
    if (!makes_weight_grads(op.kind)) continue;
    const PassRef& r = pass(stage, op);
    for (std::uint32_t i = 0; i < r.count; ++i) {
      const Segment& sg = segs_[r.first + i];
      const Recipe rc = dp_recipe(red, DpGroup::Dp, sg, kRecipeBucketed);
      Values v;
      const TaskId t = add(dps, rc, dp_info(TaskKind::GradReduce, red, stage, op.chunk, op.microbatch, sg), v);
      issue(t, v, sg.key + 1);
      g_.add_dep(sg.task, t);
      grad_tasks.push_back(t);
      const TaskId et = expert_dp_task(TaskKind::GradReduce, red, stage, op.chunk, op.microbatch, sg, rc);
      if (et != kNoTask) grad_tasks.push_back(et);
    }
  }
}

void Builder::dp_sharded_parameters(int stage, std::vector<TaskId>& grad_tasks) {
  const auto dps = out_.dp_stream[stage];
  const bool hierarchical = sh_.hierarchical && k_.replica_group.size > 1;
  // Reduce-scatter a segment's gradients in the shard group; HSDP then all-reduces the 1/N shard across replicas.
  auto reduce_segment = [&](const Segment& sg, const PipeOp& op) {
    const Recipe rc = dp_recipe(sh_.grad_collective, DpGroup::Shard, sg, 0);
    Values v;
    const TaskId rs =
        add(dps, rc, dp_info(TaskKind::GradReduce, sh_.grad_collective, stage, op.chunk, op.microbatch, sg), v);
    issue(rs, v, sg.key + 1);
    g_.add_dep(sg.task, rs);
    grad_tasks.push_back(rs);
    // Expert parameters are sharded over the expert-DP group instead (Megatron-FSDP with EP).
    const TaskId ers = expert_dp_task(TaskKind::GradReduce, sh_.grad_collective, stage, op.chunk, op.microbatch, sg, rc);
    if (ers != kNoTask) grad_tasks.push_back(ers);
    if (hierarchical) {
      const Recipe rr = dp_recipe(Collective::AllReduce, DpGroup::Replica, sg, kRecipePerShard | kRecipeHostColl);
      const TaskId ar =
          add(dps, rr, dp_info(TaskKind::GradReduce, Collective::AllReduce, stage, op.chunk, op.microbatch, sg), v);
      issue(ar, v, sg.key + 2);
      grad_tasks.push_back(ar);
    }
  };
  for (const PipeOp& op : sched()[stage]) {
    const PassRef& r = pass(stage, op);
    const bool reduce = makes_weight_grads(op.kind) &&
                        (!sc_.train.fsdp_no_sync || op.microbatch == last_wgrad_mb(stage, op.chunk));
    if (!reads_params(op.kind)) {  // W: gradients only
      for (std::uint32_t i = 0; reduce && i < r.count; ++i) reduce_segment(segs_[r.first + i], op);
      continue;
    }
    for (std::uint32_t i = 0; i < r.count; ++i) {
      const Segment& sg = segs_[r.first + i];
      // All-gather of this segment's parameters; with one segment of prefetch it is issued when the previous
      // segment starts, i.e. once the one before that has finished.
      const Recipe rc = dp_recipe(Collective::AllGather, DpGroup::Shard, sg, kRecipeParamWire);
      Values v;
      const TaskId ag =
          add(dps, rc, dp_info(TaskKind::ParamGather, Collective::AllGather, stage, op.chunk, op.microbatch, sg), v);
      if (i >= 2) g_.add_dep(segs_[r.first + i - 2].task, ag);
      g_.add_dep(ag, sg.task);
      // Issued by the pre-forward/pre-backward hook of the segment before (one unit of prefetch).
      const std::uint64_t key = i == 0 ? sg.key - 3 : segs_[r.first + i - 1].key - 2;
      issue(ag, v, key);
      out_.info[g_.tag(sg.task)].gather = ag;
      const TaskId eag = expert_dp_task(TaskKind::ParamGather, Collective::AllGather, stage, op.chunk, op.microbatch,
                                        sg, rc);
      if (eag != kNoTask) {
        if (i >= 2) g_.add_dep(segs_[r.first + i - 2].task, eag);
        g_.add_dep(eag, sg.task);
      }
      // The reduce-scatter of the previous segment's gradients follows this segment's prefetch on the stream.
      if (reduce && i >= 1) reduce_segment(segs_[r.first + i - 1], op);
    }
    if (reduce && r.count > 0) reduce_segment(segs_[r.first + r.count - 1], op);
  }
}

// Optimizer step on this rank's share of the parameters, after its gradients are reduced; memory-bound. Then the
// parameter all-gather after the step where it is not overlapped with the next forward (DeepSpeed ZeRO-2; Megatron
// without --overlap-param-gather).
void Builder::add_optimizer_step(int stage, const std::vector<TaskId>& grad_tasks) {
  const RankParams sp = stage_params(k_, stage);
  Segment whole{0, chunk_first_layer_[vstage(stage, 0)], chunk_first_layer_[vstage(stage, 0)], sp.dense, sp.expert};
  CostRecipe oc;
  oc.kind = CostRecipe::Kind::Optimizer;
  oc.stage = static_cast<std::int16_t>(stage);
  Recipe ro;
  ro.kind = RecipeKind::Optimizer;
  ro.stage = oc.stage;
  ro.id = intern_cost((static_cast<std::uint64_t>(stage) << 42) | (1ull << 63), compose(oc), oc);
  TaskInfo oi{TaskKind::Optimizer, Axis::dp, Collective::AllReduce, static_cast<std::int16_t>(stage), 0, -1, 0, 0,
              0.0f, ro.id, kNoTask};
  Values ov;
  const TaskId opt = add(out_.compute_stream[stage], ro, oi, ov);
  for (TaskId t : grad_tasks) g_.add_dep(t, opt);
  // The host around the update (HostModel): the gradient NaN checks and the fp16 found-inf / grad-norm syncs before
  // it (they drain the device), the optimizer's multi-tensor launches, then the post-step reductions and logging.
  const HostModel& h = k_.host;
  const std::uint64_t end = end_key();
  const int pre_syncs = h.grad_check_syncs + h.pre_step_syncs;
  if (h.grad_check_s + h.pre_step_s > 0) host_task(stage, HostPart::PreStep, end + 1, pre_syncs > 0);
  issue(opt, ov, end + 2);
  if (h.post_step_s > 0) host_task(stage, HostPart::PostStep, end + 4, h.post_step_syncs > 0);
  const bool gather_after_step = sh_.param_gather == ParamGather::AfterStep &&
                                 !(sh_.gather_overlaps_next_forward && sc_.train.overlap_param_gather);
  if (has_dp() && gather_after_step) {
    Recipe rc = dp_recipe(Collective::AllGather, DpGroup::Dp, whole,
                          kRecipeParamWire | kRecipeBucketed | kRecipeWholeStage);
    rc.stage = static_cast<std::int16_t>(stage);
    Values v;
    const TaskId ag =
        add(out_.dp_stream[stage], rc, dp_info(TaskKind::ParamGather, Collective::AllGather, stage, 0, -1, whole), v);
    issue(ag, v, end + 3);
    g_.add_dep(opt, ag);
    const TaskId eag = expert_dp_task(TaskKind::ParamGather, Collective::AllGather, stage, 0, -1, whole, rc);
    if (eag != kNoTask) g_.add_dep(opt, eag);
  }
}

void Builder::add_data_parallel(int stage) {
  std::vector<TaskId>& grad_tasks = grad_tasks_;  // every gradient-reduction task of this stage
  grad_tasks.clear();
  if (has_dp()) {
    switch (sh_.lowering) {
      case DataParallelLowering::BucketedOnce: dp_bucketed_once(stage, grad_tasks); break;
      case DataParallelLowering::ReduceScatterEachMicrobatch: dp_reduce_scatter_each_microbatch(stage, grad_tasks); break;
      case DataParallelLowering::ShardedParameters: dp_sharded_parameters(stage, grad_tasks); break;
    }
  }
  add_optimizer_step(stage, grad_tasks);
}

}  // namespace parsim::lowering
