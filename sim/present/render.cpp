#include "sim/present/render.hpp"

#include "sim/core/text.hpp"

#include <cmath>
#include <sstream>

namespace parsim {

namespace {
nlohmann::json kinds_json(const PerAxis<double>& v) {
  nlohmann::json j = nlohmann::json::object();
  for (Axis a : kAxes) j[axis_name(a)] = v[a];
  return j;
}
}  // namespace

nlohmann::json report_to_json(const Scenario& sc, const StepReport& r, const std::optional<TrainEstimate>& train) {
  using nlohmann::json;
  const ParamCounts pc = count_params(sc.model);
  json j;
  j["step_time_s"] = r.step_time_s;
  j["mfu"] = r.mfu;
  j["hfu"] = r.hfu;
  j["tflops_per_gpu"] = r.tflops_per_gpu;
  j["tokens_per_s"] = r.tokens_per_s;
  j["bubble_fraction"] = r.bubble_fraction;
  j["exposed_comm_s"] = r.exposed_comm_s;
  j["exposed_comm_by_kind_s"] = kinds_json(r.exposed_by_kind_s);
  const MemoryReport& m = r.memory;
  j["memory"] = {{"peak_gib", m.peak_gib},
                 {"allocated_peak_gib", m.allocated_peak_gib},
                 {"capacity_gib", m.capacity_gib},
                 {"fits", m.fits},
                 {"weights_gib", m.weights_gib},
                 {"grads_gib", m.grads_gib},
                 {"optimizer_gib", m.optimizer_gib},
                 {"activations_gib", m.activations_gib},
                 {"buffers_gib", m.buffers_gib},
                 {"overhead_gib", m.overhead_gib},
                 {"peak_stage", m.peak_stage},
                 {"per_stage_peak_gib", m.per_stage_peak_gib}};
  j["model"] = {{"name", sc.model.name},
                {"params", pc.total},
                {"layers", sc.model.layers},
                {"hidden", sc.model.hidden},
                {"heads", sc.model.heads},
                {"kv_heads", sc.model.kv_heads},
                {"ffn_hidden", sc.model.ffn_hidden},
                {"vocab", sc.model.vocab},
                {"padded_vocab", padded_vocab(sc.model.vocab, sc.plan.tp)},
                {"model_flops_per_step", r.model_flops_per_step},
                {"hardware_flops_per_step", r.hardware_flops_per_step}};
  const Plan& p = sc.plan;
  j["plan"] = {{"plan", p.to_string()}, {"tp", p.tp},        {"pp", p.pp},
               {"dp", p.dp},            {"cp", p.cp},        {"vpp", p.vpp},
               {"sharding", to_string(p.sharding)},          {"world", p.world()},
               {"layers_per_chunk", layers_per_chunk(sc.model.layers, p.pp, p.vpp)}};
  const TrainingConfig& t = sc.train;
  json settings = training_to_json(t);  // the option table's keys, resolved values
  settings["micro_batches"] = r.microbatches;
  j["settings"] = settings;
  j["hardware"] = {{"name", sc.hw.name},
                   {"gpu", sc.hw.gpu.name},
                   {"gpus_per_node", sc.hw.node.gpus_per_node},
                   {"peak_tflops", sc.hw.gpu.peak_flops(t.precision) * 1e-12},
                   {"nodes", (p.world() + sc.hw.node.gpus_per_node - 1) / sc.hw.node.gpus_per_node}};
  json stages = json::array();
  for (std::size_t s = 0; s < r.stages.size(); ++s) {
    const StageMetrics& sm = r.stages[s];
    stages.push_back({{"stage", s},
                      {"compute_s", sm.compute_s},
                      {"comm_s", sm.comm_s},
                      {"exposed_comm_s", sm.exposed_comm_s},
                      {"idle_s", sm.idle_s},
                      {"comm_by_kind_s", kinds_json(sm.comm_by_kind_s)},
                      {"exposed_comm_by_kind_s", kinds_json(sm.exposed_by_kind_s)},
                      {"peak_gib", sm.peak_gib},
                      {"allocated_peak_gib", sm.allocated_peak_gib}});
  }
  j["stages"] = stages;
  j["critical_stage"] = r.critical_stage;
  j["events"] = r.events;
  j["warnings"] = r.warnings;
  if (train) {
    json tj = {{"tokens", train->tokens}, {"goodput", train->goodput}, {"days", train->days},
               {"gpu_hours", train->gpu_hours}};
    if (train->has_cost) tj["cost_usd"] = train->cost_usd;
    j["train"] = tj;
  }
  return j;
}

namespace {
std::string pct(double f) { return fmt_fixed(100.0 * f, 1) + " %"; }
std::string ms(double s) { return fmt_fixed(s * 1e3, 2) + " ms"; }
std::string gib(double g) { return fmt_fixed(g, 2) + " GiB"; }
}  // namespace

std::string report_to_table(const Scenario& sc, const StepReport& r, const std::optional<TrainEstimate>& train) {
  std::ostringstream o;
  const Plan& p = sc.plan;
  const TrainingConfig& t = sc.train;
  const ParamCounts pc = count_params(sc.model);
  o << "parsim predict: " << sc.model.name << " (" << fmt_num(static_cast<double>(pc.total) / 1e9, 4)
    << " B params) on " << p.world() << " × " << sc.hw.gpu.name << " (" << sc.hw.node.gpus_per_node
    << " GPUs/node)\n";
  o << "  plan " << p.to_string() << "  seq " << t.seq << "  gbs " << t.gbs << "  mbs " << t.mbs << "  micro-batches "
    << r.microbatches << "  recompute " << to_string(t.recompute) << (t.sp ? "  sp" : "") << "  "
    << to_string(t.precision) << "  schedule " << to_string(t.schedule) << "\n";
  o << "  stack " << to_string(t.stack) << (t.tp_comm_overlap ? "  tp-comm-overlap" : "")
    << (t.flash_attention ? "" : "  unfused attention") << "\n\n";
  o << "  step time          " << fmt_fixed(r.step_time_s, 4) << " s\n";
  o << "  MFU / HFU          " << pct(r.mfu) << " / " << pct(r.hfu) << "\n";
  o << "  TFLOP/s per GPU    " << fmt_fixed(r.tflops_per_gpu, 1) << " (model FLOPs)\n";
  o << "  tokens/s           " << fmt_fixed(r.tokens_per_s, 0) << " (job), "
    << fmt_fixed(r.tokens_per_s / p.world(), 0) << " per GPU\n";
  o << "  pipeline bubble    " << pct(r.bubble_fraction) << "\n";
  o << "  exposed comm       " << ms(r.exposed_comm_s) << "  (";
  for (Axis a : kAxes) o << (a == kAxes.front() ? "" : ", ") << axis_name(a) << " " << ms(r.exposed_by_kind_s[a]);
  o << ")  on stage " << r.critical_stage << "\n\n";
  const MemoryReport& m = r.memory;
  o << "  memory (stage " << m.peak_stage << ", the most loaded GPU)\n";
  o << "    weights " << gib(m.weights_gib) << "  grads " << gib(m.grads_gib) << "  optimizer "
    << gib(m.optimizer_gib) << "  activations " << gib(m.activations_gib) << "  buffers " << gib(m.buffers_gib)
    << "\n";
  o << "    allocated peak " << gib(m.allocated_peak_gib) << "  + context/NCCL/fragmentation "
    << gib(m.overhead_gib) << "  = " << gib(m.peak_gib) << " of " << gib(m.capacity_gib) << "  → "
    << (m.fits ? "fits" : "DOES NOT FIT") << "\n";
  if (r.stages.size() > 1) {
    o << "\n  stage   compute      exposed comm  idle         peak\n";
    for (std::size_t s = 0; s < r.stages.size(); ++s) {
      const StageMetrics& sm = r.stages[s];
      char line[160];
      std::snprintf(line, sizeof line, "  %-6zu  %-11s  %-12s  %-11s  %s\n", s, ms(sm.compute_s).c_str(),
                    ms(sm.exposed_comm_s).c_str(), ms(sm.idle_s).c_str(), gib(sm.peak_gib).c_str());
      o << line;
    }
  }
  if (train) {
    o << "\n  training run       " << fmt_num(train->tokens, 4) << " tokens: " << fmt_fixed(train->days, 2)
      << " days, " << fmt_fixed(train->gpu_hours, 0) << " GPU-hours";
    if (train->has_cost) o << ", $" << fmt_fixed(train->cost_usd, 0);
    o << " (goodput " << fmt_fixed(train->goodput, 2) << ")\n";
  }
  for (const auto& w : r.warnings) o << "  note: " << w << "\n";
  return o.str();
}

}  // namespace parsim
