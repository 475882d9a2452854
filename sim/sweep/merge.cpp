// parsim sim/sweep — combining the reports of several `--shard` runs into one ranking.
#include "sim/core/checked.hpp"
#include "sim/core/error.hpp"
#include "sim/sweep/sweep.hpp"

#include <algorithm>
#include <set>

namespace parsim {

SweepReport merge_sweeps(const std::vector<SweepReport>& shards, const std::vector<std::string>& names) {
  require(!shards.empty(), "merge needs at least one sweep file");
  SweepReport out;
  const SweepReport& first = shards.front();
  out.model = first.model, out.gpu = first.gpu, out.gpus = first.gpus, out.gpus_per_node = first.gpus_per_node;
  out.seq = first.seq, out.gbs = first.gbs, out.precision = first.precision, out.space = first.space;
  out.base_flags = first.base_flags;
  out.shard_count = first.shard_count;
  out.counts_known = true;
  out.complete = true;
  std::set<int> seen;
  std::vector<PlanResult> all, front;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const SweepReport& s = shards[i];
    const std::string name = i < names.size() ? names[i] : "input " + std::to_string(i + 1);
    auto differs = [&](const std::string& what, const std::string& a, const std::string& b) {
      if (a != b)
        throw InputError(name + " is from a different sweep: " + what + " '" + b + "' vs '" + a + "' in " +
                         (names.empty() ? std::string("the first input") : names[0]));
    };
    differs("model", first.model, s.model);
    differs("gpu", first.gpu, s.gpu);
    differs("GPU count", std::to_string(first.gpus), std::to_string(s.gpus));
    differs("sequence length", std::to_string(first.seq), std::to_string(s.seq));
    differs("global batch", std::to_string(first.gbs), std::to_string(s.gbs));
    differs("precision", first.precision, s.precision);
    if (s.counts_known && first.counts_known) {
      differs("filters", first.space, s.space);
      differs("shard count", std::to_string(first.shard_count), std::to_string(s.shard_count));
      std::string fa, fb;
      for (const auto& f : first.base_flags) fa += f + " ";
      for (const auto& f : s.base_flags) fb += f + " ";
      differs("options", fa, fb);
    }
    for (int idx : s.shards)
      if (!seen.insert(idx).second)
        throw InputError(name + ": shard " + std::to_string(idx) + "/" + std::to_string(s.shard_count) +
                         " appears twice among the inputs");
    out.counts_known = out.counts_known && s.counts_known;
    out.complete = out.complete && s.complete;
    auto add = [&](std::int64_t& sum, std::int64_t x) {  // no signed overflow, whatever the inputs hold
      const auto r = checked_add(sum, x);
      if (!r) throw InputError(name + ": the plan counts of the inputs add up beyond 2^63");
      sum = *r;
    };
    add(out.evaluated, s.evaluated);
    add(out.simulated, s.simulated);
    add(out.feasible, s.feasible);
    for (const auto& [reason, count] : s.rejected) add(out.rejected[reason], count);
    all.insert(all.end(), s.ranked.begin(), s.ranked.end());
    front.insert(front.end(), s.pareto.begin(), s.pareto.end());
  }
  out.shards.assign(seen.begin(), seen.end());
  std::sort(all.begin(), all.end(), ranks_before);
  out.ranked = std::move(all);
  if (!out.counts_known) out.feasible = static_cast<std::int64_t>(out.ranked.size());
  // The front of the union is the front of the shards' fronts (a plan beaten inside its shard stays beaten).
  front.insert(front.end(), out.ranked.begin(), out.ranked.end());
  std::sort(front.begin(), front.end(), ranks_before);
  out.pareto = pareto_front(front);
  return out;
}

}  // namespace parsim
