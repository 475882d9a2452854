#include "sim/present/render.hpp"

#include "sim/present/fields.hpp"

#include "sim/core/text.hpp"

#include <cmath>
#include <sstream>

namespace parsim {

namespace {

using ojson = nlohmann::ordered_json;

// The schemas of the prediction's JSON: headline metrics, memory, one stage; per-axis keys from kAxes.
const FieldTable<StepReport>& headline_fields() {
  static const FieldTable<StepReport> t = [] {
    FieldTable<StepReport> f;
    auto num = [&](const char* key, double StepReport::*m) {
      f.push_back({key, "", FieldType::Num, false, [m](const StepReport& r) { return ojson(r.*m); }, nullptr});
    };
    num("step_time_s", &StepReport::step_time_s);
    num("mfu", &StepReport::mfu);
    num("mfu_full_attention", &StepReport::mfu_full_attention);
    num("hfu", &StepReport::hfu);
    num("tflops_per_gpu", &StepReport::tflops_per_gpu);
    num("tokens_per_s", &StepReport::tokens_per_s);
    num("bubble_fraction", &StepReport::bubble_fraction);
    num("exposed_comm_s", &StepReport::exposed_comm_s);
    for (Axis a : kAxes)
      f.push_back({std::string("exposed_comm_by_kind_s.") + axis_name(a), "", FieldType::Num, false,
                   [a](const StepReport& r) { return ojson(r.exposed_by_kind_s[a]); }, nullptr});
    return f;
  }();
  return t;
}

const FieldTable<MemoryReport>& memory_fields() {
  static const FieldTable<MemoryReport> t = [] {
    FieldTable<MemoryReport> f;
    auto gib = [&](const char* key, double MemoryReport::*m) {
      f.push_back({key, "", FieldType::Num, false, [m](const MemoryReport& r) { return ojson(r.*m); }, nullptr});
    };
    gib("peak_gib", &MemoryReport::peak_gib);
    gib("allocated_peak_gib", &MemoryReport::allocated_peak_gib);
    gib("required_gib", &MemoryReport::required_gib);
    gib("capacity_gib", &MemoryReport::capacity_gib);
    f.push_back({"fits", "", FieldType::Bool, false, [](const MemoryReport& r) { return ojson(r.fits); }, nullptr});
    gib("weights_gib", &MemoryReport::weights_gib);
    gib("grads_gib", &MemoryReport::grads_gib);
    gib("optimizer_gib", &MemoryReport::optimizer_gib);
    gib("activations_gib", &MemoryReport::activations_gib);
    gib("buffers_gib", &MemoryReport::buffers_gib);
    gib("fp8_cache_gib", &MemoryReport::fp8_cache_gib);
    gib("workspace_gib", &MemoryReport::workspace_gib);
    gib("overhead_gib", &MemoryReport::overhead_gib);
    f.push_back({"peak_stage", "", FieldType::Int, false, [](const MemoryReport& r) { return ojson(r.peak_stage); },
                 nullptr});
    f.push_back({"per_stage_peak_gib", "", FieldType::Num, false,
                 [](const MemoryReport& r) { return ojson(r.per_stage_peak_gib); }, nullptr});
    return f;
  }();
  return t;
}

const FieldTable<StageMetrics>& stage_fields() {
  static const FieldTable<StageMetrics> t = [] {
    FieldTable<StageMetrics> f;
    auto num = [&](const char* key, double StageMetrics::*m) {
      f.push_back({key, "", FieldType::Num, false, [m](const StageMetrics& r) { return ojson(r.*m); }, nullptr});
    };
    num("compute_s", &StageMetrics::compute_s);
    num("comm_s", &StageMetrics::comm_s);
    num("exposed_comm_s", &StageMetrics::exposed_comm_s);
    num("idle_s", &StageMetrics::idle_s);
    for (Axis a : kAxes) {
      f.push_back({std::string("comm_by_kind_s.") + axis_name(a), "", FieldType::Num, false,
                   [a](const StageMetrics& r) { return ojson(r.comm_by_kind_s[a]); }, nullptr});
      f.push_back({std::string("exposed_comm_by_kind_s.") + axis_name(a), "", FieldType::Num, false,
                   [a](const StageMetrics& r) { return ojson(r.exposed_by_kind_s[a]); }, nullptr});
    }
    num("peak_gib", &StageMetrics::peak_gib);
    num("allocated_peak_gib", &StageMetrics::allocated_peak_gib);
    return f;
  }();
  return t;
}

template <class T>
nlohmann::json to_json(const FieldTable<T>& table, const T& row) {
  ojson j = ojson::object();
  fields_to_json(table, row, j);
  return nlohmann::json::parse(j.dump());
}

}  // namespace

nlohmann::json expected_error_json(const ExpectedError& e) {
  return {{"regime", e.regime}, {"label", e.label}, {"typical_abs_error_pct", e.typical_pct}, {"basis", e.basis}};
}

nlohmann::json report_to_json(const Scenario& sc, const StepReport& r, const std::optional<TrainEstimate>& train) {
  using nlohmann::json;
  const ParamCounts pc = count_params(sc.model);
  json j = to_json(headline_fields(), r);
  j["fits"] = r.memory.fits;  // also memory.fits; a plan that does not fit has this verdict first in "warnings"
  j["memory"] = to_json(memory_fields(), r.memory);
  j["model"] = {{"name", sc.model.name},
                {"params", pc.total},
                // What one token uses (= params for dense models): the MFU's model FLOPs count these (Megatron-Core's
                // MoE throughput formula, models/flops.cpp).
                {"active_params", pc.active},
                {"layers", sc.model.layers},
                {"hidden", sc.model.hidden},
                {"heads", sc.model.heads},
                {"kv_heads", sc.model.kv_heads},
                {"ffn_hidden", sc.model.ffn_hidden},
                {"vocab", sc.model.vocab},
                {"padded_vocab", padded_vocab(sc.model.vocab, sc.plan.tp)},
                {"model_flops_per_step", r.model_flops_per_step},
                {"model_flops_full_attention_per_step", r.model_flops_full_attention_per_step},
                {"hardware_flops_per_step", r.hardware_flops_per_step}};
  if (sc.model.is_moe()) {
    j["model"]["experts"] = sc.model.experts;
    j["model"]["experts_per_token"] = sc.model.experts_per_token;
    j["model"]["shared_experts"] = sc.model.shared_experts;
    int moe_layers = 0;
    for (const auto& [kind, n] : sc.model.layer_kind_counts()) moe_layers += kind.ffn == FfnKind::MoE ? n : 0;
    j["model"]["moe_layers"] = moe_layers;
  }
  // A hybrid model's single-block layers by kind (models/model.hpp LayerKind: Mamba-2 mixer, attention, MLP, MoE).
  if (const HybridCounts hc = hybrid_counts(sc.model); hc.hybrid)
    j["model"]["hybrid_layers"] = {{"mamba", hc.mamba}, {"attention", hc.attention}, {"mlp", hc.mlp}, {"moe", hc.moe}};
  // Multi-token-prediction modules are counted apart from params (DeepSeek-V3: 671 B + 14 B MTP) and not simulated.
  if (sc.model.mtp_layers > 0) j["model"]["mtp_params"] = pc.mtp;
  const Plan& p = sc.plan;
  json plan = {{"plan", p.to_string()},
               {"etp", p.expert_tp()},
               {"vpp", p.vpp},
               {"sharding", to_string(p.sharding)},
               {"world", p.world()},
               {"layers_per_chunk", layers_per_chunk(sc.model.layers, p.pp, p.vpp, sc.train.split)}};
  for (Axis a : kAxes) plan[axis_name(a)] = p.degree(a);
  j["plan"] = plan;
  const TrainingConfig& t = sc.train;
  json settings = training_to_json(t);  // the option table's keys, resolved values
  if (!sc.model.is_moe())  // the MoE options mean nothing to a dense model
    for (const char* key :
         {"moe_imbalance", "moe_capacity_factor", "moe_dispatcher", "moe_shared_expert_overlap", "moe_a2a_overlap",
          "moe_fused_grouped_mlp"})
      settings.erase(key);
  settings["micro_batches"] = r.microbatches;
  j["settings"] = settings;
  j["hardware"] = {{"name", sc.hw.name},
                   {"gpu", sc.hw.gpu.name},
                   {"gpus_per_node", sc.hw.node.gpus_per_node},
                   {"peak_tflops", sc.hw.gpu.peak_flops(t.precision) * 1e-12},
                   {"nodes", (p.world() + sc.hw.node.gpus_per_node - 1) / sc.hw.node.gpus_per_node}};
  json stages = json::array();
  for (std::size_t s = 0; s < r.stages.size(); ++s) {
    json st = to_json(stage_fields(), r.stages[s]);
    st["stage"] = s;
    stages.push_back(st);
  }
  j["stages"] = stages;
  j["critical_stage"] = r.critical_stage;
  // Where one layer's passes spend their time, per layer kind (predict fills StepReport::layer_kinds).
  if (!r.layer_kinds.empty()) {
    json kinds = json::array();
    auto pass_json = [](const LayerKindReport::Pass& ps) {
      const PassParts& q = ps.parts;
      return json{{"gemm_s", q.gemm_s},           {"attention_s", q.attention_s},
                  {"memory_bound_s", q.memory_bound_s}, {"fp8_cast_s", q.fp8_cast_s},
                  {"recompute_s", q.recompute_s}, {"other_s", q.other_s},
                  {"compute_s", ps.compute_s},    {"exposed_comm_s", ps.exposed_comm_s},
                  {"host_wait_s", ps.host_wait_s}, {"duration_s", ps.duration_s},
                  {"host_issue_s", ps.host_issue_s}, {"kernels", ps.kernels}};
    };
    for (const LayerKindReport& k : r.layer_kinds)
      kinds.push_back({{"attention", to_string(k.attention)},
                       {"ffn", to_string(k.ffn)},
                       {"layers", k.layers},
                       {"forward", pass_json(k.forward)},
                       {"backward", pass_json(k.backward)}});
    j["layer_kinds"] = kinds;
  }
  j["events"] = r.events;
  if (r.expected_error) j["expected_error"] = expected_error_json(*r.expected_error);
  if (r.cpu_offload)
    j["cpu_offload"] = {{"layers", r.cpu_offload->layers},
                        {"gib_per_microbatch", r.cpu_offload->gib_per_microbatch},
                        {"link_gbytes_per_s", r.cpu_offload->link_gbytes_per_s},
                        {"exposed_s", r.cpu_offload->exposed_s},
                        {"host_capacity_gib", r.cpu_offload->host_capacity_gib > 0
                                                  ? ojson(r.cpu_offload->host_capacity_gib)
                                                  : ojson(nullptr)},
                        {"host_fits", r.cpu_offload->host_fits()}};
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
  // A plan that does not fit — on the device, or its offloaded activations in host memory — says so first (its step
  // time is what it would take with enough memory); those warnings are not repeated as notes below.
  const auto headline = [](const std::string& w) {
    return w.rfind("DOES NOT FIT", 0) == 0 || w.rfind("HOST MEMORY", 0) == 0;
  };
  for (const auto& w : r.warnings)
    if (headline(w)) o << "!! " << w << "\n";
  o << "parsim predict: " << sc.model.name << " (" << fmt_num(static_cast<double>(pc.total) / 1e9, 4) << " B params";
  if (pc.active != pc.total) o << ", " << fmt_num(static_cast<double>(pc.active) / 1e9, 4) << " B active";
  o << ") on " << p.world() << " × " << sc.hw.gpu.name << " (" << sc.hw.node.gpus_per_node << " GPUs/node)\n";
  o << "  plan " << p.to_string() << "  seq " << t.seq << "  gbs " << t.gbs << "  mbs " << t.mbs << "  micro-batches "
    << r.microbatches << "  recompute " << to_string(t.recompute)
    << (t.recompute == Recompute::Selective && t.recompute_modules != RecomputeModules{}
            ? " (" + to_string(t.recompute_modules) + ")"
            : std::string())
    << (t.sp ? "  sp" : "") << "  "
    << to_string(t.precision) << "  schedule " << to_string(t.schedule)
    << (effective_optimizer_sync(t) == OptimizerSync::PostValidation ? " (optimizer post-validation)" : "") << "\n";
  o << "  stack " << to_string(t.stack) << (t.tp_comm_overlap ? "  tp-comm-overlap" : "")
    << (t.flash_attention ? (t.flash_v1 ? "  flash1 attention" : t.attention_cudnn ? "  cudnn attention" : "")
                          : "  unfused attention")
    << (t.cross_entropy_fusion ? "  fused cross-entropy" : "") << (t.reentrant_checkpoint ? "  reentrant checkpoint" : "")
    << (t.compile && t.stack == Stack::PyTorch ? "  torch.compile" : "") << "\n";
  if (const HybridCounts hc = hybrid_counts(sc.model); hc.hybrid)
    o << "  hybrid: " << sc.model.layers << " single-block layers = " << hc.mamba << " Mamba-2 + " << hc.attention
      << " attention + " << hc.mlp << " MLP + " << hc.moe << " MoE\n";
  if (sc.model.is_moe())
    o << "  MoE: " << sc.model.experts << " experts, top-" << sc.model.experts_per_token << ", ep" << p.ep << " etp"
      << p.expert_tp() << " edp" << p.expert_dp() << " (" << sc.model.experts / p.ep << " experts per GPU), "
      << to_string(t.moe_dispatcher) << " dispatcher, imbalance " << fmt_num(t.moe_imbalance, 3)
      << (t.moe_capacity_factor > 0 ? ", capacity factor " + fmt_num(t.moe_capacity_factor, 3) : std::string())
      << (t.moe_shared_expert_overlap ? ", shared experts overlapped" : "")
      << (t.moe_a2a_overlap ? ", token exchange overlapped with another micro-batch" : "")
      << (t.moe_fused_grouped_mlp ? ", fused grouped expert MLP" : "") << "\n";
  o << "\n";
  o << "  step time          " << fmt_fixed(r.step_time_s, 4) << " s\n";
  if (r.expected_error)
    o << "  expected error     ±" << fmt_fixed(r.expected_error->typical_pct, 1) << " % typical for a "
      << r.expected_error->label << "\n                     (mean out-of-sample |error| of " << r.expected_error->basis
      << ")\n";
  o << "  MFU / HFU          " << pct(r.mfu) << " / " << pct(r.hfu) << "  (" << (sc.model.is_moe() ? "active FLOPs, " : "")
    << "causal attention; " << pct(r.mfu_full_attention) << " MFU counting the full s², Megatron ≤ core v0.11)\n";
  o << "  TFLOP/s per GPU    " << fmt_fixed(r.tflops_per_gpu, 1) << " (model FLOPs)\n";
  o << "  tokens/s           " << fmt_fixed(r.tokens_per_s, 0) << " (job), "
    << fmt_fixed(r.tokens_per_s / p.world(), 0) << " per GPU\n";
  o << "  pipeline bubble    " << pct(r.bubble_fraction) << "\n";
  o << "  exposed comm       " << ms(r.exposed_comm_s) << "  (";
  for (Axis a : kAxes) o << (a == kAxes.front() ? "" : ", ") << axis_name(a) << " " << ms(r.exposed_by_kind_s[a]);
  o << ")  on stage " << r.critical_stage << "\n";
  if (r.cpu_offload)
    o << "  cpu offloading     " << r.cpu_offload->layers << " layers' activations, "
      << fmt_fixed(r.cpu_offload->gib_per_microbatch, 2) << " GiB per micro-batch to host memory and back over "
      << fmt_num(r.cpu_offload->link_gbytes_per_s, 4) << " GB/s each way; " << ms(r.cpu_offload->exposed_s)
      << " of waiting for the copies; host memory "
      << (r.cpu_offload->host_capacity_gib > 0
              ? fmt_fixed(r.cpu_offload->gib_per_microbatch, 1) + " of " +
                    fmt_fixed(r.cpu_offload->host_capacity_gib, 1) + " GiB per GPU" +
                    (r.cpu_offload->host_fits() ? "" : " — does not fit")
              : std::string("per GPU not stated by the hardware (not checked)"))
      << "\n";
  o << "\n";
  if (!r.layer_kinds.empty()) {
    // One layer's forward and backward (recompute included) for one micro-batch on one rank, by kind.
    o << "  one layer, one micro-batch, one GPU (ms): where its passes spend their time\n";
    char head[260];
    std::snprintf(head, sizeof head, "    %-20s %7s  %-4s %9s %10s %13s %9s %10s %7s %13s %10s %8s\n", "kind", "layers",
                  "pass", "GEMM", "attention", "memory-bound", "fp8 cast", "recompute", "other", "exposed comm",
                  "host wait", "= pass");
    o << head;
    for (const LayerKindReport& k : r.layer_kinds) {
      const std::string name = k.attention == AttentionKind::None ? to_string(k.ffn)
                               : k.ffn == FfnKind::None         ? to_string(k.attention)
                                                                : to_string(k.attention) + " + " + to_string(k.ffn);
      for (int b = 0; b < 2; ++b) {
        const LayerKindReport::Pass& ps = b == 0 ? k.forward : k.backward;
        const PassParts& q = ps.parts;
        char line[260];
        std::snprintf(line, sizeof line,
                      "    %-20s %7s  %-4s %9.3f %10.3f %13.3f %9.3f %10.3f %7.3f %13.3f %10.3f %8.3f\n",
                      b == 0 ? name.c_str() : "", b == 0 ? std::to_string(k.layers).c_str() : "", b == 0 ? "fwd" : "bwd",
                      1e3 * q.gemm_s, 1e3 * q.attention_s, 1e3 * q.memory_bound_s, 1e3 * q.fp8_cast_s,
                      1e3 * q.recompute_s, 1e3 * q.other_s, 1e3 * ps.exposed_comm_s, 1e3 * ps.host_wait_s,
                      1e3 * ps.duration_s);
        o << line;
      }
    }
    o << "\n";
  }
  const MemoryReport& m = r.memory;
  o << "  memory (stage " << m.peak_stage << ", the most loaded GPU)\n";
  // DualPipe: every rank holds its stage and a copy of the mirror stage (ScheduleTraits::parameter_copies).
  const int copies = p.pp > 1 ? schedule_traits(t.schedule).parameter_copies : 1;
  o << "    weights " << gib(m.weights_gib) << (copies > 1 ? " (" + std::to_string(copies) + " copies)" : "")
    << "  grads " << gib(m.grads_gib) << "  optimizer "
    << gib(m.optimizer_gib) << "  activations " << gib(m.activations_gib) << "  buffers " << gib(m.buffers_gib)
    << "\n";
  o << "    allocated peak " << gib(m.allocated_peak_gib) << "  + context/NCCL/allocator cache "
    << gib(m.overhead_gib) << "  = " << gib(m.peak_gib) << "; needs " << gib(m.required_gib) << " (no cache) of "
    << gib(m.capacity_gib) << "  → " << (m.fits ? "fits" : "DOES NOT FIT") << "\n";
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
  for (const auto& w : r.warnings)
    if (!headline(w)) o << "  note: " << w << "\n";
  return o.str();
}

}  // namespace parsim
