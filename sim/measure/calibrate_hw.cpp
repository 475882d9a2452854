// calibrate --out: turn a fitted benchmark into a hardware file that `--gpu` accepts.
//
// The fit gives the latency floor α (small messages) and the bus bandwidth of large messages. parsim's collective
// model (hardware/collectives.cpp) turns a tier's `latency_s` (α per algorithm step) and `efficiency` (achievable /
// nominal bandwidth) into a time, with its own choice of algorithm (ring, tree, hierarchical, NVLS). Rather than
// re-deriving that model here, the values are found by matching it: starting from α / (algorithm steps) and
// busbw / nominal, `efficiency` is rescaled until collective_time() of the benchmark's largest message equals the
// fitted time, and `latency_s` until the smallest message's time does (a fixed-point iteration; both times are
// monotone in their knob). When the model picks NVLS for the benchmark (H100/H200/B200 all-reduce inside a node), the
// NVLS knobs (nvls_efficiency, nvls_latency_s) are the ones set. The tier is the one the benchmark measured: intra-node
// when all ranks sit in one node, inter-node otherwise.
#include "sim/measure/calibrate.hpp"

#include "hardware/hardware.hpp"
#include "sim/core/error.hpp"
#include "sim/core/text.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace parsim {

std::string calibration_hardware_json(const Calibration& fit, const std::string& base, int gpus_per_node_override,
                                      std::vector<std::string>& notes) {
  std::string preset = base;
  if (preset.empty()) preset = preset_for_gpu_name(fit.gpu_name);
  if (preset.empty())
    throw InputError("calibrate --out: cannot tell which GPU ran the benchmark" +
                     (fit.gpu_name.empty() ? std::string() : " ('" + fit.gpu_name + "')") +
                     "; pass --gpu with a preset name or hardware file to start from");
  Hardware hw = resolve_hardware(preset, gpus_per_node_override);

  Collective coll = Collective::AllReduce;
  if (fit.collective == "all_gather") coll = Collective::AllGather;
  else if (fit.collective == "reduce_scatter") coll = Collective::ReduceScatter;
  else if (fit.collective == "alltoall") coll = Collective::AllToAll;
  else if (fit.collective == "sendrecv") coll = Collective::SendRecv;
  else if (fit.collective == "broadcast" || fit.collective == "reduce") coll = Collective::Broadcast;

  GroupShape g;
  g.size = fit.ranks;
  g.nodes = std::max(1, fit.nodes);
  g.per_node = static_cast<int>((std::int64_t{fit.ranks} + g.nodes - 1) / g.nodes);
  g.concurrent_per_node = g.per_node;
  if (!fit.intra_node && g.per_node > hw.node.gpus_per_node)
    notes.push_back("the benchmark ran " + std::to_string(g.per_node) + " ranks per node but the hardware has " +
                    std::to_string(hw.node.gpus_per_node) + " GPUs per node; pass --gpus-per-node");

  const auto& first = fit.points.front();
  const auto& last = fit.points.back();
  const double s_small = first.bytes, t_small = first.predicted_s;
  const double s_large = last.bytes, t_large = last.predicted_s;
  LinkTier& tier = fit.intra_node ? hw.node.scale_up() : hw.node.inter();
  const std::string tier_name = fit.intra_node ? "scale_up" : "scale_out";

  auto time = [&](double s) { return collective_time(hw, coll, s, g).time_s; };
  // The knobs of the measured tier, scaled together so the preset's ratios between algorithms are kept: inside a node
  // with NVLS both the ring and the NVLS figures (NCCL picks the faster of the two), across nodes the network's.
  const bool nvls = fit.intra_node && tier.nvls;
  std::vector<double*> eff{&tier.efficiency}, lat{&tier.latency_s};
  // Keys as the hardware file names them (hardware_to_json), so the provenance replaces the preset's.
  std::vector<std::string> keys{"node." + tier_name + ".efficiency", "node." + tier_name + ".latency_us"};
  if (nvls) {  // the tier's latency is also NVLS's extra latency; its efficiency knob is separate
    eff.push_back(&tier.nvls_efficiency);
    keys.push_back("node.scale_up.nvls_efficiency");
  }
  // A tier without a latency gets α per ring step to start from (all-reduce 2(n−1) steps, others n−1; domain notes §7).
  const double steps = coll == Collective::AllReduce ? 2.0 * (fit.ranks - 1) : std::max(1.0, fit.ranks - 1.0);
  for (double* l : lat)
    if (!(*l > 0)) *l = fit.alpha_s / steps;

  bool converged = false;
  double tl = time(s_large), ts = time(s_small);
  for (int it = 0; it < 100 && !converged; ++it) {
    const double e_scale = tl / t_large;  // the bandwidth term ∝ 1/efficiency
    for (double* e : eff) *e *= e_scale;
    ts = time(s_small);
    const double l_scale = t_small / ts;  // the latency term ∝ latency
    for (double* l : lat) *l *= l_scale;
    tl = time(s_large);
    ts = time(s_small);
    converged = std::fabs(tl / t_large - 1) < 0.005 && std::fabs(ts / t_small - 1) < 0.005;
  }
  std::string values = keys[0] + " = " + fmt_num(*eff[0], 4) + ", " + keys[1] + " = " + fmt_num(*lat[0] * 1e6, 4) + " us";
  for (std::size_t i = 1; i < eff.size(); ++i) values += ", " + keys[i + 1] + " = " + fmt_num(*eff[i], 4);
  notes.push_back("hardware file from '" + preset + "': " + values + "; parsim's collective model then gives " +
                  fmt_num(ts * 1e6, 4) + " us at " + fmt_num(s_small, 4) + " B (fit " + fmt_num(t_small * 1e6, 4) +
                  " us) and " + fmt_num(tl * 1e3, 4) + " ms at " + fmt_num(s_large, 4) + " B (fit " +
                  fmt_num(t_large * 1e3, 4) + " ms)");
  if (!converged)
    notes.push_back("parsim's collective model could not be matched to the fit within 0.5 % at both ends (it may add "
                    "fixed costs the benchmark does not show); the closest values are written");
  for (std::size_t i = 0; i < eff.size(); ++i)
    if (*eff[i] > 1.0)
      notes.push_back(keys[i == 0 ? 0 : i + 1] + " > 1: the benchmark beats the preset's nominal bandwidth (in-network "
                      "reduction, or a nominal figure that is too low)");

  const std::string provenance = "parsim calibrate: " + fit.collective + " on " + std::to_string(fit.ranks) +
                                 " ranks / " + std::to_string(fit.nodes) + " node(s), alpha " +
                                 fmt_num(fit.alpha_s * 1e6, 4) + " us, busbw " + fmt_num(fit.busbw_Bps / 1e9, 4) +
                                 " GB/s";
  for (const auto& k : keys) hw.sources[k] = provenance;
  hw.name = hw.name + "-calibrated";
  try {  // a fit on extreme numbers can drive the knobs to 0, inf or NaN: never write a file --gpu would reject
    validate_hardware(hw);
  } catch (const InputError& e) {
    throw InputError(std::string("calibrate --out: the fitted values do not make a valid hardware file: ") + e.what());
  }
  return hardware_to_json(hw);
}

}  // namespace parsim
