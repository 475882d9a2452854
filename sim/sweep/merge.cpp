// parsim sim/sweep — combining the reports of several `--shard` runs into one ranking.
#include "sim/core/checked.hpp"
#include "sim/core/error.hpp"
#include "sim/sweep/sweep.hpp"

#include <algorithm>
#include <set>

namespace parsim {

SweepReport merge_sweeps(const std::vector<SweepReport>& shards, const std::vector<std::string>& names, bool partial) {
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
    // A CSV holds rows only: which shard, how many plans were evaluated — unknown (issue 12: merging a CSV lost
    // that silently). Ranked only when the user says a partial answer will do.
    if (!s.counts_known && !partial)
      throw InputError(name + " is a sweep CSV: it holds result rows but not its shard or its plan counts, so the merge "
                       "cannot tell whether the ranking is complete (merge the --format json of each shard, or pass "
                       "--partial to rank the rows given)");
    for (int idx : s.shards)
      if (s.counts_known && (idx < 0 || idx >= s.shard_count))
        throw InputError(name + ": shard index " + std::to_string(idx) + " is not below its shard count " +
                         std::to_string(s.shard_count));
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
  // Every shard of the sweep must be there (merging 2 of 3 shards ranked a third of the space away, silently).
  if (out.counts_known && out.shard_count > 0 && static_cast<std::int64_t>(seen.size()) < out.shard_count) {
    int first_missing = 0;
    for (int idx : seen) {  // sorted: the first gap
      if (idx != first_missing) break;
      ++first_missing;
    }
    const std::int64_t missing = out.shard_count - static_cast<std::int64_t>(seen.size());
    if (!partial)
      throw InputError("the inputs hold " + std::to_string(seen.size()) + " of the " + std::to_string(out.shard_count) +
                       " shards of this sweep: shard " + std::to_string(first_missing) + "/" +
                       std::to_string(out.shard_count) +
                       (missing > 1 ? " and " + std::to_string(missing - 1) + " more are" : std::string(" is")) +
                       " missing (give every shard's file, or pass --partial to rank the shards given)");
    out.complete = false;
  }
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
