// parsim plans/ — plan grammar (docs/cli.md "Plan grammar"), schedule names, batch defaults and the
// split of layers into pipeline chunks.
#include "plans/plan.hpp"

#include "sim/core/checked.hpp"
#include "sim/core/error.hpp"
#include "sim/core/text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace parsim {

namespace {

constexpr std::int64_t kMaxDegree = 1 << 20;  // no real cluster comes near; keeps every product inside int
constexpr std::int64_t kMaxWorld = 1 << 24;

// The sharding terms of the grammar come from the traits table (plans/sharding.cpp): every row's term; the ZeRO
// stages share the keyword "zero<N>"; a row that takes a group size is "<term><N>".
std::string sharding_terms_help() {
  std::string zero, other;
  for (const ShardingTraits& t : all_sharding_traits()) {
    const std::string term = t.term;
    if (term.rfind("zero", 0) == 0) {
      zero = zero.empty() ? term : zero.substr(0, 5) + ".." + term;
    } else {
      if (!other.empty()) other += ", ";
      other += term + (t.term_takes_group ? "<N>" : "");
    }
  }
  return zero + ", " + other;
}
const std::string& terms_help() {
  static const std::string h = "tp<N>, pp<N>, dp<N>, cp<N>, ep<N>, etp<N>, vpp<N>, " + sharding_terms_help();
  return h;
}

struct Keyword {
  std::string word;
  bool takes_number;
  const ShardingTraits* sharding;  // a sharding term (nullptr: a degree); "zero" picks the stage by its number
  bool zero_stages;
};
// No keyword is a prefix of another, so the first match at a position is the only one.
const std::vector<Keyword>& plan_keywords() {
  static const std::vector<Keyword> k = [] {
    std::vector<Keyword> v{{"vpp", true, nullptr, false}, {"etp", true, nullptr, false}, {"ep", true, nullptr, false},
                           {"tp", true, nullptr, false},  {"pp", true, nullptr, false},  {"dp", true, nullptr, false},
                           {"cp", true, nullptr, false}};
    bool zero = false;
    for (const ShardingTraits& t : all_sharding_traits()) {
      const std::string term = t.term;
      if (term.rfind("zero", 0) == 0) {
        if (!zero) v.push_back({"zero", true, &t, true});
        zero = true;
      } else {
        v.push_back({term, t.term_takes_group, &t, false});
      }
    }
    return v;
  }();
  return k;
}

// The text of the offending term for messages: its letters and the digits after them.
std::string term_at(const std::string& s, std::size_t i) {
  std::size_t j = i;
  while (j < s.size() && std::isalpha(static_cast<unsigned char>(s[j]))) ++j;
  while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
  if (j == i) j = i + 1;  // a stray digit or symbol
  return s.substr(i, j - i);
}

}  // namespace

std::string Plan::to_string() const {
  std::string out = "tp" + std::to_string(tp) + "pp" + std::to_string(pp) + "dp" + std::to_string(dp);
  if (cp != 1) out += "cp" + std::to_string(cp);
  if (ep != 1) out += "ep" + std::to_string(ep);
  if (etp > 0 && etp != tp) out += "etp" + std::to_string(etp);
  if (vpp != 1) out += "vpp" + std::to_string(vpp);
  if (sharding != Sharding::None) {
    const ShardingTraits& t = sharding_traits(sharding);
    out += t.term;
    if (t.term_takes_group) out += std::to_string(hsdp_group);
  }
  return out;
}

Plan parse_plan(const std::string& text) {
  const std::string s = to_lower(text);
  const std::string& kTermsHelp = terms_help();
  if (trim(s).empty()) throw InputError("empty plan (valid terms: " + kTermsHelp + ", e.g. tp8pp2dp4)");
  const std::vector<Keyword>& keywords = plan_keywords();
  Plan p;
  std::vector<bool> seen(keywords.size(), false);
  std::string sharding_term;  // the first sharding term, for the "two sharding terms" message
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t k = 0;
    for (; k < keywords.size(); ++k)
      if (s.compare(i, keywords[k].word.size(), keywords[k].word) == 0) break;
    if (k == keywords.size())
      throw InputError("unknown plan term '" + term_at(text, i) + "' in '" + text + "' (valid terms: " + kTermsHelp +
                       ")");
    const std::string word(keywords[k].word);
    std::size_t j = i + word.size();
    std::size_t digits_end = j;
    while (digits_end < s.size() && std::isdigit(static_cast<unsigned char>(s[digits_end]))) ++digits_end;
    const std::string term = text.substr(i, digits_end - i);
    if (!keywords[k].takes_number && digits_end > j)
      throw InputError("plan term '" + term + "' in '" + text + "' takes no number (write '" + word + "')");
    std::int64_t value = 1;
    if (keywords[k].takes_number) {
      if (digits_end == j)
        throw InputError("plan term '" + word + "' in '" + text + "' is missing its number (e.g. '" + word +
                         (word == "zero" ? "1" : "2") + "')");
      const std::string num = s.substr(j, digits_end - j);
      // Strip leading zeros so that `tp08` reads 8 and `tp000…` is caught as zero without overflowing stoll.
      const std::size_t nz = num.find_first_not_of('0');
      const std::string sig = nz == std::string::npos ? "0" : num.substr(nz);
      value = sig.size() > 9 ? kMaxDegree + 1 : std::stoll(sig);
    }
    const bool is_sharding = keywords[k].sharding != nullptr;
    if (seen[k]) {
      throw InputError("repeated plan term '" + term + "' in '" + text + "' (each of " + kTermsHelp +
                       " may appear once)");
    }
    if (is_sharding && !sharding_term.empty())
      throw InputError("two sharding terms '" + sharding_term + "' and '" + term + "' in '" + text +
                       "' (use one of " + sharding_terms_help() + ")");
    seen[k] = true;
    if (keywords[k].zero_stages) {
      const ShardingTraits* stage = nullptr;
      std::string stages;
      for (const ShardingTraits& t : all_sharding_traits()) {
        const std::string name = t.term;
        if (name.rfind("zero", 0) != 0) continue;
        if (name == "zero" + std::to_string(value)) stage = &t;
        if (!stages.empty()) stages += ", ";
        stages += name.substr(4);
      }
      if (!stage)
        throw InputError("plan term '" + term + "' in '" + text + "': ZeRO stage must be one of " + stages);
      p.sharding = stage->scheme;
    } else {
      if (value == 0)
        throw InputError("plan term '" + term + "' in '" + text + "' has degree 0 (degrees are positive integers)");
      if (value > kMaxDegree)
        throw InputError("plan term '" + term + "' in '" + text + "' is too large (at most " +
                         std::to_string(kMaxDegree) + ")");
      const int v = static_cast<int>(value);
      if (word == "tp") p.tp = v;
      else if (word == "pp") p.pp = v;
      else if (word == "dp") p.dp = v;
      else if (word == "cp") p.cp = v;
      else if (word == "vpp") p.vpp = v;
      else if (word == "ep") p.ep = v;
      else if (word == "etp") p.etp = v;
      else if (const ShardingTraits* t = keywords[k].sharding) {
        p.sharding = t->scheme;
        if (t->term_takes_group) p.hsdp_group = v;
      }
    }
    if (is_sharding) sharding_term = term;
    i = digits_end;
  }
  const std::int64_t world = std::int64_t{p.tp} * p.pp * p.dp * p.cp;
  if (world > kMaxWorld)
    throw InputError("plan '" + text + "' has world size " + std::to_string(world) + " (tp·pp·dp·cp), more than " +
                     std::to_string(kMaxWorld) + " GPUs");
  if (sharding_traits(p.sharding).term_takes_group && p.dp % p.hsdp_group != 0)
    throw InputError(to_string(p.sharding) + std::to_string(p.hsdp_group) + " in '" + text + "' does not divide dp" +
                     std::to_string(p.dp) + " (the shard group size must divide the data-parallel degree)");
  return p;
}

// docs/cli.md, --gbs default: ⌈4,194,304 / seq⌉ rounded up to a multiple of dp × mbs.
std::int64_t default_gbs(std::int64_t seq, int dp, std::int64_t mbs) {
  require(seq > 0, "sequence length must be a positive integer, got " + std::to_string(seq));
  require(dp > 0, "dp must be a positive integer, got " + std::to_string(dp));
  require(mbs > 0, "--mbs must be a positive integer, got " + std::to_string(mbs));
  constexpr std::int64_t kTokens = 4'194'304;  // 4 Mi tokens per step
  const std::int64_t seqs = (kTokens + seq - 1) / seq;
  // Checked: --mbs takes 18 digits, and dp × mbs (or the rounding up) passed 2^63 (found by fuzz_plan).
  const auto unit = checked_mul(dp, mbs);
  const auto rounded = unit ? checked_add(seqs, *unit - 1) : std::nullopt;
  if (!rounded)
    throw InputError("the default global batch, a multiple of dp × mbs = " + std::to_string(dp) + " × " +
                     std::to_string(mbs) + ", is beyond 2^63 sequences (give --gbs, or a smaller --mbs)");
  return *rounded / *unit * *unit;
}

std::int64_t sweep_default_gbs(std::int64_t seq) {
  require(seq > 0, "sequence length must be a positive integer, got " + std::to_string(seq));
  constexpr std::int64_t kTokens = 4'194'304;
  return (kTokens + seq - 1) / seq;
}

std::vector<int> layers_per_chunk(int layers, int pp, int vpp) {
  require(layers > 0, "the model must have at least one layer, got " + std::to_string(layers));
  require(pp > 0 && vpp > 0, "pp and vpp must be positive, got pp" + std::to_string(pp) + " vpp" + std::to_string(vpp));
  const std::int64_t chunks64 = std::int64_t{pp} * vpp;
  if (chunks64 > layers)
    throw InputError("pp" + std::to_string(pp) + " × vpp" + std::to_string(vpp) + " = " + std::to_string(chunks64) +
                     " pipeline chunks exceed the " + std::to_string(layers) +
                     " layers (each chunk needs at least one layer)");
  const int chunks = static_cast<int>(chunks64);
  const int q = layers / chunks;
  const int r = layers % chunks;
  std::vector<int> out(static_cast<std::size_t>(chunks), q + 1);
  // The chunks - r lighter chunks come from the ends inwards: 0, C-1, 1, C-2, … (first and last stages carry the
  // embedding and the LM head; Megatron-Core --account-for-embedding/loss-in-pipeline-split).
  int lo = 0, hi = chunks - 1;
  for (int n = 0; n < chunks - r; ++n) {
    if (n % 2 == 0) out[static_cast<std::size_t>(lo++)] = q;
    else out[static_cast<std::size_t>(hi--)] = q;
  }
  return out;
}

std::vector<int> layers_per_chunk(int layers, int pp, int vpp, const PipelineSplit& split) {
  if (!split.any()) return layers_per_chunk(layers, pp, vpp);
  require(layers > 0, "the model must have at least one layer, got " + std::to_string(layers));
  require(pp > 0 && vpp > 0, "pp and vpp must be positive, got pp" + std::to_string(pp) + " vpp" + std::to_string(vpp));
  auto S = [](std::int64_t v) { return std::to_string(v); };
  if (split.layout) return layout_layers_per_chunk(layers, pp, vpp, split);
  std::vector<int> per_stage(static_cast<std::size_t>(pp), 0);
  const bool uneven = split.first_stage_layers > 0 || split.last_stage_layers > 0;
  if (uneven) {
    if (split.account_for_embedding || split.account_for_loss)
      throw InputError("--decoder-first/last-pipeline-num-layers cannot be combined with "
                       "--account-for-embedding/loss-in-pipeline-split (Megatron-Core refuses the combination)");
    if (pp < 2)
      throw InputError("--decoder-first/last-pipeline-num-layers need pipeline parallelism (pp > 1), got pp" + S(pp));
    int rest = layers, stages = pp;
    if (split.first_stage_layers > 0) rest -= split.first_stage_layers, --stages;
    if (split.last_stage_layers > 0) rest -= split.last_stage_layers, --stages;
    if (rest < 0 || (stages == 0 && rest != 0) || (stages > 0 && (rest % stages != 0 || rest / stages < 1)))
      throw InputError("first/last pipeline stages of " + S(split.first_stage_layers) + "/" +
                       S(split.last_stage_layers) + " layers leave " + S(rest) + " of the " + S(layers) +
                       " layers for the other " + S(stages) +
                       " stages (Megatron-Core needs them to divide evenly, at least one layer each)");
    for (int s = 0; s < pp; ++s) per_stage[static_cast<std::size_t>(s)] = stages > 0 ? rest / stages : 0;
    if (split.first_stage_layers > 0) per_stage.front() = split.first_stage_layers;
    if (split.last_stage_layers > 0) per_stage.back() = split.last_stage_layers;
  } else {
    const int slots = layers + (split.account_for_embedding ? 1 : 0) + (split.account_for_loss ? 1 : 0);
    if (slots % pp != 0)
      throw InputError(S(layers) + " layers" + (split.account_for_embedding ? " + the embedding" : "") +
                       (split.account_for_loss ? " + the loss" : "") + " = " + S(slots) +
                       " pipeline slots do not divide by pp" + S(pp) + " (Megatron-Core needs an even split)");
    std::fill(per_stage.begin(), per_stage.end(), slots / pp);
  }
  std::vector<int> out(static_cast<std::size_t>(pp) * vpp, 0);
  for (int s = 0; s < pp; ++s) {
    const int n = per_stage[static_cast<std::size_t>(s)];
    if (n % vpp != 0)
      throw InputError("pipeline stage " + S(s) + " has " + S(n) + " layers (or slots), not divisible by vpp" + S(vpp) +
                       " (Megatron-Core gives every virtual chunk of a stage the same count)");
    for (int v = 0; v < vpp; ++v) out[static_cast<std::size_t>(v) * pp + s] = n / vpp;
  }
  if (split.account_for_embedding) --out.front();
  if (split.account_for_loss) --out.back();
  if (out.front() < 0 || out.back() < 0)
    throw InputError("the embedding/loss slots leave a negative layer count on the first/last virtual stage");
  return out;
}

std::vector<int> layers_per_stage(int layers, int pp, int vpp) {
  const auto chunks = layers_per_chunk(layers, pp, vpp);
  std::vector<int> out(static_cast<std::size_t>(pp), 0);
  // chunk index = v·pp + stage
  for (std::size_t c = 0; c < chunks.size(); ++c) out[c % static_cast<std::size_t>(pp)] += chunks[c];
  return out;
}

}  // namespace parsim

namespace parsim {

std::string to_string(Stack s) {
  switch (s) {
    case Stack::Auto: return "auto";
    case Stack::Megatron: return "megatron";
    case Stack::MegatronLegacy: return "megatron-legacy";
    case Stack::PyTorch: return "pytorch";
  }
  return "?";
}

Stack parse_stack(const std::string& s) {
  std::string l;
  for (char c : s) l.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (l == "auto") return Stack::Auto;
  if (l == "megatron") return Stack::Megatron;
  if (l == "megatron-legacy" || l == "megatron-deepspeed") return Stack::MegatronLegacy;
  if (l == "pytorch") return Stack::PyTorch;
  throw InputError("--stack '" + s + "' is not valid (choose auto, megatron, megatron-legacy or pytorch)");
}

std::string to_string(MoeDispatcher d) {
  switch (d) {
    case MoeDispatcher::AllToAll: return "alltoall";
    case MoeDispatcher::AllGather: return "allgather";
    case MoeDispatcher::Flex: return "flex";
  }
  return "?";
}

MoeDispatcher parse_moe_dispatcher(const std::string& s) {
  std::string l;
  for (char c : s) l.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (l == "alltoall") return MoeDispatcher::AllToAll;
  if (l == "allgather") return MoeDispatcher::AllGather;
  if (l == "flex" || l == "deepep" || l == "hybridep") return MoeDispatcher::Flex;
  throw InputError("--moe-dispatcher '" + s + "' is not valid (choose alltoall, allgather or flex)");
}

}  // namespace parsim
