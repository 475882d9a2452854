#include "sim/core/error.hpp"
#include "sim/core/text.hpp"
#include "sim/step/evaluate.hpp"

namespace parsim {

void apply_framework_options(const ScenarioArgs& a, TrainingConfig& t) {
  if (a.bucket_mb < 0) throw InputError("--bucket-mb must be positive, got " + std::to_string(a.bucket_mb));
  t.bucket_bytes = a.bucket_mb * 1e6;
  t.overlap_grad_reduce = a.overlap_grad_reduce;
  t.overlap_param_gather = a.overlap_param_gather;
  t.tp_comm_overlap_auto = a.tp_comm_overlap < 0;
  t.tp_comm_overlap = a.tp_comm_overlap > 0;
  t.overlap_p2p = a.overlap_p2p;
  t.fsdp_no_sync = a.fsdp_no_sync;
  t.stack = parse_stack(a.stack);
  const std::string att = to_lower(a.attention);
  if (att != "flash" && att != "unfused")
    throw InputError("--attention '" + a.attention + "' is not valid (choose flash or unfused)");
  t.flash_attention = att == "flash";
}

Scenario make_scenario(const ScenarioArgs& a) {
  Scenario sc;
  if (a.model.empty()) throw InputError("--model is required (a built-in name or a model JSON / HF config.json path)");
  if (a.plan.empty()) throw InputError("--plan is required (e.g. tp8pp2dp4, dp64fsdp, tp4pp8dp16vpp5zero1)");
  sc.model = resolve_model(a.model);
  sc.hw = resolve_hardware(a.gpu, a.gpus_per_node);
  sc.plan = parse_plan(a.plan);
  TrainingConfig& t = sc.train;
  t.seq = a.seq > 0 ? a.seq : sc.model.seq_len;
  t.mbs = a.mbs;
  t.recompute = parse_recompute(a.recompute);
  t.precision = parse_precision(a.precision);
  t.sp = a.sp;
  // `interleaved` is implied by vpp > 1; naming another schedule with vpp > 1 is rejected by validate_plan.
  if (a.schedule_given) t.schedule = parse_schedule(a.schedule);
  else t.schedule = sc.plan.vpp > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
  apply_framework_options(a, t);
  t.gbs = a.gbs > 0 ? a.gbs : default_gbs(t.seq, sc.plan.dp, t.mbs);
  validate_plan(sc.plan, sc.model, sc.hw, t);
  return sc;
}

}  // namespace parsim
