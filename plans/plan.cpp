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

const char* kTermsHelp = "tp<N>, pp<N>, dp<N>, cp<N>, vpp<N>, zero0..zero3, fsdp, hsdp<N>";

// The text of the offending term for messages: its letters and the digits after them.
std::string term_at(const std::string& s, std::size_t i) {
  std::size_t j = i;
  while (j < s.size() && std::isalpha(static_cast<unsigned char>(s[j]))) ++j;
  while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
  if (j == i) j = i + 1;  // a stray digit or symbol
  return s.substr(i, j - i);
}

}  // namespace

std::string to_string(Sharding s) {
  switch (s) {
    case Sharding::None: return "zero0";
    case Sharding::Zero1: return "zero1";
    case Sharding::Zero2: return "zero2";
    case Sharding::Zero3: return "zero3";
    case Sharding::FSDP: return "fsdp";
    case Sharding::HSDP: return "hsdp";
  }
  return "?";
}

Sharding parse_sharding(const std::string& s) {
  const std::string l = to_lower(trim(s));
  if (l == "0" || l == "zero0" || l == "none" || l == "ddp") return Sharding::None;
  if (l == "1" || l == "zero1") return Sharding::Zero1;
  if (l == "2" || l == "zero2") return Sharding::Zero2;
  if (l == "3" || l == "zero3") return Sharding::Zero3;
  if (l == "fsdp") return Sharding::FSDP;
  if (l == "hsdp") return Sharding::HSDP;
  throw InputError("sharding '" + s + "' is not valid (choose 0, 1, 2, 3, zero0..zero3, none, fsdp or hsdp)");
}

std::string Plan::to_string() const {
  std::string out = "tp" + std::to_string(tp) + "pp" + std::to_string(pp) + "dp" + std::to_string(dp);
  if (cp != 1) out += "cp" + std::to_string(cp);
  if (vpp != 1) out += "vpp" + std::to_string(vpp);
  switch (sharding) {
    case Sharding::None: break;
    case Sharding::HSDP: out += "hsdp" + std::to_string(hsdp_group); break;
    default: out += parsim::to_string(sharding); break;
  }
  return out;
}

Plan parse_plan(const std::string& text) {
  const std::string s = to_lower(text);
  if (trim(s).empty()) throw InputError("empty plan (valid terms: " + std::string(kTermsHelp) + ", e.g. tp8pp2dp4)");

  // No keyword is a prefix of another, so the first match at a position is the only one.
  struct Keyword {
    std::string_view word;
    bool takes_number;
  };
  static constexpr std::array<Keyword, 8> keywords{{{"vpp", true},
                                                    {"tp", true},
                                                    {"pp", true},
                                                    {"dp", true},
                                                    {"cp", true},
                                                    {"zero", true},
                                                    {"fsdp", false},
                                                    {"hsdp", true}}};
  Plan p;
  std::array<bool, 8> seen{};
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
    const bool is_sharding = word == "zero" || word == "fsdp" || word == "hsdp";
    if (seen[k]) {
      throw InputError("repeated plan term '" + term + "' in '" + text + "' (each of " + kTermsHelp +
                       " may appear once)");
    }
    if (is_sharding && !sharding_term.empty())
      throw InputError("two sharding terms '" + sharding_term + "' and '" + term + "' in '" + text +
                       "' (use one of zero0..zero3, fsdp, hsdp<N>)");
    seen[k] = true;
    if (word == "zero") {
      if (value > 3) throw InputError("plan term '" + term + "' in '" + text + "': ZeRO stage must be 0, 1, 2 or 3");
      static constexpr std::array<Sharding, 4> stages{Sharding::None, Sharding::Zero1, Sharding::Zero2,
                                                      Sharding::Zero3};
      p.sharding = stages[static_cast<std::size_t>(value)];
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
      else if (word == "fsdp") p.sharding = Sharding::FSDP;
      else if (word == "hsdp") {
        p.sharding = Sharding::HSDP;
        p.hsdp_group = v;
      }
    }
    if (is_sharding) sharding_term = term;
    i = digits_end;
  }
  const std::int64_t world = std::int64_t{p.tp} * p.pp * p.dp * p.cp;
  if (world > kMaxWorld)
    throw InputError("plan '" + text + "' has world size " + std::to_string(world) + " (tp·pp·dp·cp), more than " +
                     std::to_string(kMaxWorld) + " GPUs");
  if (p.sharding == Sharding::HSDP && p.dp % p.hsdp_group != 0)
    throw InputError("hsdp" + std::to_string(p.hsdp_group) + " in '" + text + "' does not divide dp" +
                     std::to_string(p.dp) + " (the shard group size must divide the data-parallel degree)");
  return p;
}

std::string to_string(Schedule s) {
  switch (s) {
    case Schedule::GPipe: return "gpipe";
    case Schedule::OneFOneB: return "1f1b";
    case Schedule::Interleaved: return "interleaved";
  }
  return "?";
}

Schedule parse_schedule(const std::string& s) {
  const std::string l = to_lower(trim(s));
  if (l == "gpipe") return Schedule::GPipe;
  if (l == "1f1b") return Schedule::OneFOneB;
  if (l == "interleaved" || l == "interleaved-1f1b" || l == "interleaved1f1b") return Schedule::Interleaved;
  throw InputError("--schedule '" + s + "' is not valid (choose gpipe, 1f1b or interleaved)");
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
    case Stack::PyTorch: return "pytorch";
  }
  return "?";
}

Stack parse_stack(const std::string& s) {
  std::string l;
  for (char c : s) l.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (l == "auto") return Stack::Auto;
  if (l == "megatron") return Stack::Megatron;
  if (l == "pytorch") return Stack::PyTorch;
  throw InputError("--stack '" + s + "' is not valid (choose auto, megatron or pytorch)");
}

Stack resolved_stack(const Plan& p, const TrainingConfig& t) {
  if (t.stack != Stack::Auto) return t.stack;
  return (p.sharding == Sharding::None || p.sharding == Sharding::Zero1) ? Stack::Megatron : Stack::PyTorch;
}

bool resolved_tp_comm_overlap(const Plan& p, const TrainingConfig& t) {
  if (!t.tp_comm_overlap_auto) return t.tp_comm_overlap;
  return resolved_stack(p, t) == Stack::Megatron && t.sp && p.tp > 1;
}

double grad_wire_bytes(const Plan& p, const TrainingConfig& t) {
  if (t.precision == Precision::FP32) return 4;
  return (p.sharding == Sharding::None || p.sharding == Sharding::Zero1) ? 4 : 2;
}

double param_wire_bytes(const TrainingConfig& t) { return t.precision == Precision::FP32 ? 4 : 2; }

double resolved_bucket_bytes(const Plan& p, const TrainingConfig& t) {
  if (t.bucket_bytes > 0) return t.bucket_bytes;
  if (resolved_stack(p, t) == Stack::Megatron)
    return std::max(40e6, 1e6 * static_cast<double>(p.dp) * p.cp) * grad_wire_bytes(p, t);
  return 25e6;
}

}  // namespace parsim
