// fuzz_plan: the plan grammar (`--plan`) and plan validation against a model and a cluster, as predict runs them
// before simulating. The input is text, one item per line:
//   line 1: the plan string (tp8pp2dp4zero1 …)
//   then optional `key=value` lines: model=<preset or mixtral>, gpu=<preset>, gpus_per_node=N, seq=N, gbs=N, mbs=N,
//   precision=…, recompute=…, schedule=…, sp=1, stack=…
// Values go through the same parsers as the CLI's flags. For a plan that validates, the rank layout, process groups
// and layer split must be consistent, and the pipeline schedule complete (when its size is small enough to build).
#include "fuzz_common.hpp"
#include "hardware/hardware.hpp"
#include "models/model.hpp"
#include "plans/plan.hpp"
#include "sim/core/text.hpp"

#include <algorithm>
#include <numeric>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace parsim;
  const std::string text = fuzz::bytes(data, size);
  fuzz::guarded([&] {
    const auto lines = split(text, '\n');
    const Plan p = parse_plan(lines.at(0));
    PARSIM_FUZZ_CHECK(p.world() >= 1 && p.world() <= (1 << 24), p.to_string());
    // The canonical string parses back to the same plan.
    const Plan again = parse_plan(p.to_string());
    PARSIM_FUZZ_CHECK(again.to_string() == p.to_string(), p.to_string());

    std::string model = "llama2-7b", gpu = "h100";
    int gpn = 0;
    TrainingConfig t;
    std::int64_t seq = 0, gbs = 0;
    for (std::size_t i = 1; i < lines.size(); ++i) {
      const std::string line = trim(lines[i]);
      const auto eq = line.find('=');
      if (line.empty() || eq == std::string::npos) continue;
      const std::string k = line.substr(0, eq), v = line.substr(eq + 1);
      if (k == "model") model = v;
      else if (k == "gpu") gpu = v;
      else if (k == "gpus_per_node") gpn = static_cast<int>(std::min<std::int64_t>(parse_positive_int(v, k), 1024));
      else if (k == "seq") seq = parse_positive_int(v, k);
      else if (k == "gbs") gbs = parse_positive_int(v, k);
      else if (k == "mbs") t.mbs = parse_positive_int(v, k);
      else if (k == "precision") t.precision = parse_precision(v);
      else if (k == "recompute") t.recompute = parse_recompute(v);
      else if (k == "schedule") t.schedule = parse_schedule(v);
      else if (k == "stack") t.stack = parse_stack(v);
      else if (k == "sp") t.sp = v == "1";
    }
    if (model.find('/') != std::string::npos || gpu.find('/') != std::string::npos) return;  // presets only
    // One mixture-of-experts model besides the (dense) presets, so that ep/etp plans reach expert validation:
    // Mixtral 8x7B in parsim's schema (tests/data/models/mixtral_parsim.json).
    static const std::string moe = fuzz::scratch_file(
        "mixtral.json", R"({"name": "mixtral-8x7b", "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8,
                           "ffn_hidden": 14336, "vocab": 32000, "seq_len": 4096, "activation": "swiglu",
                           "experts": 8, "experts_per_token": 2})");
    const ModelSpec m = resolve_model(model == "mixtral" ? moe : model);
    const Hardware hw = resolve_hardware(gpu, gpn);
    t.seq = seq > 0 ? seq : m.seq_len;
    t.gbs = gbs > 0 ? gbs : default_gbs(t.seq, p.dp, t.mbs);
    if (p.vpp > 1) t.schedule = Schedule::Interleaved;
    const auto err = plan_error(p, m, hw, t);
    try {
      validate_plan(p, m, hw, t);
      PARSIM_FUZZ_CHECK(!err, "validate_plan accepts what plan_error rejects: " + err.value_or(""));
    } catch (const InputError& e) {
      PARSIM_FUZZ_CHECK(err.has_value(), std::string("plan_error accepts what validate_plan rejects: ") + e.what());
      throw;
    }
    (void)plan_warnings(p, m, hw, t);
    // Layer split: every layer in exactly one chunk.
    const auto chunks = layers_per_chunk(m.layers, p.pp, p.vpp);
    PARSIM_FUZZ_CHECK(std::accumulate(chunks.begin(), chunks.end(), 0) == m.layers, p.to_string());
    // Rank layout: coord_of and rank_of are inverse on a few ranks; each group holds its rank.
    for (const int r : {0, p.world() / 2, p.world() - 1}) {
      PARSIM_FUZZ_CHECK(rank_of(p, coord_of(p, r)) == r, p.to_string());
      if (p.world() <= 4096)
        for (const GroupKind g : {GroupKind::TP, GroupKind::CP, GroupKind::DP, GroupKind::PP, GroupKind::DPxCP}) {
          const auto ranks = group_ranks(p, g, r);
          PARSIM_FUZZ_CHECK(std::find(ranks.begin(), ranks.end(), r) != ranks.end(), p.to_string());
        }
    }
    for (const GroupKind g : {GroupKind::TP, GroupKind::CP, GroupKind::DP, GroupKind::PP, GroupKind::DPxCP}) {
      if (p.world() > 4096) break;
      const GroupShape s = group_shape(p, g, hw.node.gpus_per_node);
      PARSIM_FUZZ_CHECK(s.size >= 1 && s.nodes >= 1 && s.per_node >= 1, p.to_string());
    }
    const std::int64_t micro = t.micro_batches(p);
    if (micro >= 1 && micro <= 100'000 && micro * p.vpp * p.pp <= 100'000) {  // (micro first: no overflow)
      const auto ops = pipeline_schedule(t.schedule, p.pp, p.vpp, static_cast<int>(micro));
      PARSIM_FUZZ_CHECK(ops.size() == static_cast<std::size_t>(p.pp), p.to_string());
      for (const auto& stage : ops)
        PARSIM_FUZZ_CHECK(stage.size() == static_cast<std::size_t>(2 * micro * p.vpp), p.to_string());
    }
  });
  return 0;
}
