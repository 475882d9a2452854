// Megatron-Core's pipeline layout string (--pipeline-model-parallel-layout): parsing, interning and the layer split it
// gives (plans/plan.hpp parse_pipeline_layout, layers_per_chunk). Apart from plan.cpp so that the split the sweep calls
// per plan compiles as before.
#include "plans/plan.hpp"

#include "sim/core/error.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace parsim {

std::vector<std::string> parse_pipeline_layout(const std::string& layout) {
  const std::string bad = "pipeline layout '" + layout + "' is not valid";
  const std::string valid = " (Megatron-Core's format: virtual stages separated by '|' of E embedding, t decoder layer, "
                            "m MTP layer, L loss, with (…)*n and x*n repeats, e.g. Et*4|(t*4|)*14tmL)";
  // The repeat count after a '*' at `i`; advances i past the digits.
  auto count_at = [&](const std::string& s, std::size_t& i) {
    if (i >= s.size() || s[i] != '*') throw InputError(bad + ": a repeat needs '*n'" + valid);
    ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
    if (j == i || j - i > 4) throw InputError(bad + ": a repeat count must be 1 to 4 digits" + valid);
    const int n = std::stoi(s.substr(i, j - i));
    i = j;
    return n;
  };
  std::string text;
  for (char ch : layout)
    if (ch != ',') text += ch;
  // Groups "(…)*n" first (no nesting, as Megatron-Core's regex), then "x*n".
  std::string grouped;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == ')') throw InputError(bad + ": ')' without '('" + valid);
    if (text[i] != '(') {
      grouped += text[i++];
      continue;
    }
    const std::size_t close = text.find(')', i + 1);
    if (close == std::string::npos || close == i + 1 || text.find('(', i + 1) < close)
      throw InputError(bad + ": a group must be '(…)*n', not empty or nested" + valid);
    const std::string body = text.substr(i + 1, close - i - 1);
    i = close + 1;
    const int n = count_at(text, i);
    for (int k = 0; k < n; ++k) grouped += body;
    if (grouped.size() > 1'000'000) throw InputError(bad + ": it expands to more than a million characters" + valid);
  }
  std::vector<std::string> stages(1);
  for (std::size_t i = 0; i < grouped.size();) {
    const char ch = grouped[i++];
    if (ch == '|') {
      stages.emplace_back();
      continue;
    }
    if (ch != 'E' && ch != 't' && ch != 'm' && ch != 'L')
      throw InputError(bad + ": unknown layer character '" + std::string(1, ch) + "'" + valid);
    const int n = i < grouped.size() && grouped[i] == '*' ? count_at(grouped, i) : 1;
    stages.back().append(static_cast<std::size_t>(n), ch);
    if (stages.back().size() > 1'000'000) throw InputError(bad + ": a stage of more than a million layers" + valid);
  }
  return stages;
}

namespace {
// The interned layouts, each with its parse once a caller asked for it. A std::map's nodes never move, so the key's
// address is the interned pointer and a parse, once stored, stays valid for the life of the process.
struct LayoutPool {
  std::mutex mu;
  std::map<std::string, std::optional<std::vector<std::string>>, std::less<>> entries;
};
LayoutPool& layout_pool() {
  static LayoutPool pool;
  return pool;
}
}  // namespace

const std::string* intern_pipeline_layout(const std::string& layout) {
  if (layout.empty()) return nullptr;
  LayoutPool& pool = layout_pool();
  const std::lock_guard<std::mutex> lock(pool.mu);
  return &pool.entries.try_emplace(layout).first->first;
}

const std::vector<std::string>& pipeline_layout_stages(const std::string* interned) {
  LayoutPool& pool = layout_pool();
  const std::lock_guard<std::mutex> lock(pool.mu);
  const auto it = pool.entries.find(*interned);
  if (it == pool.entries.end() || &it->first != interned)
    throw InputError("pipeline layout '" + *interned + "' was not interned (intern_pipeline_layout)");
  if (!it->second) it->second = parse_pipeline_layout(*interned);
  return *it->second;
}

std::vector<int> layout_layers_per_chunk(int layers, int pp, int vpp, const PipelineSplit& split) {
  auto S = [](std::int64_t v) { return std::to_string(v); };
  // Megatron-Core PipelineParallelLayerLayout (validate_layer_layout): the layout gives pp·vpp virtual stages, the
  // embedding first and the loss last, exactly `layers` decoder layers. parsim costs the embedding with the first
  // virtual stage and the LM head, loss and MTP modules with the last (costs/edges.cpp), so the layout must put them
  // there (Megatron-Core also lets an MTP or loss stage stand alone: not modelled).
  if (split.first_stage_layers > 0 || split.last_stage_layers > 0 || split.account_for_embedding ||
      split.account_for_loss)
    throw InputError("--pipeline-model-parallel-layout cannot be combined with --decoder-first/last-pipeline-num-"
                     "layers or --account-for-embedding/loss-in-pipeline-split (Megatron-Core refuses the "
                     "combination)");
  const auto& stages = pipeline_layout_stages(split.layout);
  const std::string where = "pipeline layout '" + *split.layout + "'";
  if (static_cast<std::int64_t>(stages.size()) != std::int64_t{pp} * vpp)
    throw InputError(where + " has " + S(static_cast<std::int64_t>(stages.size())) +
                     " virtual stages; the plan has pp" + S(pp) + " × vpp" + S(vpp) + " = " +
                     S(std::int64_t{pp} * vpp));
  std::vector<int> out;
  out.reserve(stages.size());
  std::int64_t decoder = 0, embeddings = 0, losses = 0;
  for (std::size_t v = 0; v < stages.size(); ++v) {
    const std::string& st = stages[v];
    const auto t = std::count(st.begin(), st.end(), 't');
    decoder += t;
    out.push_back(static_cast<int>(t));
    embeddings += std::count(st.begin(), st.end(), 'E');
    losses += std::count(st.begin(), st.end(), 'L');
    const bool first = v == 0, last = v + 1 == stages.size();
    if (!first && st.find('E') != std::string::npos)
      throw InputError(where + ": the embedding 'E' must open the first virtual stage");
    if (!last && (st.find('L') != std::string::npos || st.find('m') != std::string::npos))
      throw InputError(where + ": parsim places the loss 'L' and the MTP layers 'm' on the last virtual stage "
                               "(with the LM head); found in virtual stage " + S(static_cast<std::int64_t>(v)));
  }
  if (embeddings != 1 || stages.front().empty() || stages.front().front() != 'E')
    throw InputError(where + ": the embedding 'E' must appear once, first");
  if (losses != 1 || stages.back().empty() || stages.back().back() != 'L')
    throw InputError(where + ": the loss 'L' must appear once, last");
  const std::string& tail = stages.back();
  if (tail.find('m') != std::string::npos && tail.find('t', tail.find('m')) != std::string::npos)
    throw InputError(where + ": decoder layers 't' must come before the MTP layers 'm'");
  if (decoder != layers)
    throw InputError(where + " holds " + S(decoder) + " decoder layers 't'; the model has " + S(layers));
  return out;
}

}  // namespace parsim
