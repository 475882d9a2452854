// parsim plans/ — the plan space a sweep searches.
//
// The space for `gpus` GPUs, in this (deterministic) nesting order, outermost first:
//   tp   divisors of gpus with tp | heads and KV heads split or replicated (validate.cpp), tp ≤ max_tp_per_node
//        (default: gpus per node, or no limit when the filter lists tp values), and tp | gpus_per_node or a
//        multiple of it.
//   cp   powers of two (any listed value with --cp) dividing gpus/tp, with seq % (2·cp) == 0.
//   pp   divisors of gpus/(tp·cp) with pp ≤ layers;  dp = gpus/(tp·cp·pp), which must divide the global batch.
//   vpp  1, and for pp > 1 every v ≥ 2 with pp·v ≤ layers whose chunks are even (layers % (pp·v) == 0) or even once
//        the embedding and the loss take a layer's slot each ((layers + 2) % (pp·v) == 0, Megatron-Core's
//        --account-for-embedding/loss-in-pipeline-split; Llama-3.1-405B's 126 layers on pp8×vpp8); any listed value
//        with --vpp. pp2 interleaving only with overlapped P2P (Megatron-LM).
//   schedule  1F1B for vpp = 1, interleaved for vpp > 1 (ScheduleTraits::in_sweep_by_default); the others only when
//        the filter lists them: GPipe (never faster than 1F1B, holds m micro-batches of activations), zb-h1, zb-h2,
//        dualpipe (vpp = 1), zb-v and dualpipev (vpp = 2); each where its preconditions hold
//        (schedule_precondition_error: m % pp for interleaving, m ≥ 2·pp and even pp/m for the DualPipe family).
//   mbs  powers of two (any listed value with --mbs) dividing gbs/dp; interleaving needs m = gbs/(dp·mbs) % pp == 0.
//   sharding  zero0 (DDP); zero1/zero2/zero3/fsdp when the DP×CP group has more than one rank (Megatron-Core shards
//        the distributed optimizer over DP×CP); zero2/zero3/fsdp/hsdp not with pp > 1 unless listed (DeepSpeed's
//        pipeline engine refuses ZeRO-2/3, Megatron-Core has no FSDP with PP, and parsim's per-micro-batch FSDP
//        re-gathers model what FSDP does without PP; torchtitan's PP+FSDP keeps parameters gathered across
//        micro-batches — ask for it explicitly with --zero fsdp); hsdp with shard groups of gpus_per_node/(tp·cp) DP ranks (one node) when that is > 1, below
//        dp and divides it.
//   ep, etp  (MoE models; dense models keep ep1) Megatron-Core MoE parallel folding over the tp·cp·dp GPUs of a
//        stage: ep every divisor of the routed experts, etp 1 and tp (any listed values with --ep / --etp), with
//        ep·etp dividing tp·cp·dp; ep > 1 only with the Megatron stack's schemes (zero0, zero1) unless --zero lists
//        schemes (Megatron-Core's expert parallelism runs under its DDP / distributed optimizer).
//   recompute none, selective, full (and op, torchtitan's per-op policy, when --recompute lists it).
//   sp   off, and on when tp > 1 and tp divides the tokens per CP rank; MoE models with tp > 1 only on (Megatron-Core
//        requires sequence parallelism with MoE and tensor parallelism) unless --sp lists off.
// Precision and the remaining TrainingConfig fields come from `base`. Every candidate passes validate_plan.
#include "plans/plan.hpp"
#include "plans/scenario.hpp"

#include "sim/core/error.hpp"

#include <algorithm>

namespace parsim {

namespace {

template <class T>
bool allowed(const std::vector<T>& list, T v) {
  return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
}

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

bool is_pow2(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

}  // namespace

std::vector<Candidate> enumerate_space(const ModelSpec& m, const Hardware& hw, int gpus, const TrainingConfig& base,
                                       const SpaceFilter& f) {
  require(gpus > 0, "--gpus must be a positive integer, got " + std::to_string(gpus));
  require(m.layers > 0 && m.heads > 0 && m.kv_heads > 0, "model " + m.name + " needs positive layers and heads");
  if (!m.is_moe()) {
    const auto only_one = [](const std::vector<int>& l) {
      return std::all_of(l.begin(), l.end(), [](int v) { return v == 1; });
    };
    require(only_one(f.ep), "--ep lists expert-parallel degrees above 1, but model " + m.name +
                                " has no routed experts (valid for it: 1, or leave --ep out)");
  }
  const int G = hw.node.gpus_per_node;
  require(G > 0, "gpus_per_node must be a positive integer, got " + std::to_string(G));
  TrainingConfig t = base;
  if (t.seq <= 0) t.seq = m.seq_len;
  require(t.seq > 0, "sequence length must be a positive integer, got " + std::to_string(t.seq));
  if (t.gbs <= 0) t.gbs = sweep_default_gbs(t.seq);
  if (t.precision == Precision::FP8 && !hw.gpu.has_fp8())
    throw InputError("--precision fp8 needs fp8 tensor cores, which " + hw.gpu.name +
                     " does not have (choose bf16, fp16 or fp32)");
  // An explicit --tp list is taken at its word (tp16 on 8-GPU nodes spans two); otherwise tp stays in a node.
  const int max_tp = f.max_tp_per_node > 0 ? f.max_tp_per_node : (f.tp.empty() ? G : gpus);
  const int L = m.layers;

  std::vector<Candidate> out;
  for (int tp : divisors(gpus)) {
    if (!allowed(f.tp, tp) || tp > max_tp) continue;
    if (m.heads % tp != 0 || (m.kv_heads % tp != 0 && tp % m.kv_heads != 0)) continue;
    if (G % tp != 0 && tp % G != 0) continue;
    // Expert layouts (MoE): (ep, etp) pairs; filtered per stage below by ep·etp | tp·cp·dp.
    std::vector<std::pair<int, int>> experts;
    if (!m.is_moe()) {
      experts.emplace_back(1, tp);
    } else {
      std::vector<int> etps = f.etp;
      if (etps.empty()) {
        etps.push_back(1);
        if (tp > 1) etps.push_back(tp);
      }
      for (int ep : divisors(m.experts)) {
        if (!allowed(f.ep, ep)) continue;
        for (int etp : etps) experts.emplace_back(ep, etp);
      }
    }
    for (int cp : divisors(gpus / tp)) {
      if (f.cp.empty() ? !is_pow2(cp) : !allowed(f.cp, cp)) continue;
      if (cp > 1 && t.seq % (2 * std::int64_t{cp}) != 0) continue;
      for (int pp : divisors(gpus / (tp * cp))) {
        if (!allowed(f.pp, pp) || pp > L) continue;
        const int dp = gpus / (tp * cp * pp);
        if (!allowed(f.dp, dp) || t.gbs % dp != 0) continue;
        const std::int64_t per_replica = t.gbs / dp;

        std::vector<int> vpps;
        if (allowed(f.vpp, 1)) vpps.push_back(1);
        if (pp > 1 && (pp > 2 || t.overlap_p2p))
          for (int v = 2; std::int64_t{pp} * v <= L; ++v) {
            const int chunks = pp * v;
            const bool even = L % chunks == 0 || (L + 2) % chunks == 0;
            if (f.vpp.empty() ? even : allowed(f.vpp, v)) vpps.push_back(v);
          }

        for (int vpp : vpps) {
          // Schedules in traits order (plans/schedule.cpp): those fitting vpp (virtual stages or not) that the filter
          // lists, or the sweep's defaults when it lists none. Without a pipeline the schedule does not matter: one.
          std::vector<Schedule> schedules;
          for (const ScheduleTraits& st : all_schedule_traits()) {
            if (!vpp_fits(st, vpp)) continue;
            if (f.schedule.empty() ? !st.in_sweep_by_default : !allowed(f.schedule, st.schedule)) continue;
            schedules.push_back(st.schedule);
            if (pp == 1) break;
          }
          for (Schedule sched : schedules) {
            // Only the candidates are tried (powers of two, or the listed values), never every integer up to
            // gbs/dp: --gbs 2^40 on one replica enumerated 10^12 sizes (issue 12). Ascending, as before.
            const ScheduleTraits& sched_traits = schedule_traits(sched);
            std::vector<std::int64_t> mbss;
            const auto consider = [&](std::int64_t mbs) {
              if (mbs <= 0 || mbs > per_replica || per_replica % mbs != 0) return;
              if (pp > 1 && schedule_precondition_error(sched_traits, pp, vpp, per_replica / mbs)) return;
              mbss.push_back(mbs);
            };
            if (f.mbs.empty())
              for (std::int64_t mbs = 1;; mbs *= 2) {  // at most 63 steps, no overflow
                consider(mbs);
                if (mbs > per_replica / 2) break;
              }
            else
              for (int mbs : f.mbs) consider(mbs);
            std::sort(mbss.begin(), mbss.end());
            mbss.erase(std::unique(mbss.begin(), mbss.end()), mbss.end());
            for (std::int64_t mbs : mbss) {
              std::vector<Plan> plans;
              for (const auto& [ep, etp] : experts) {
              Plan p;
              p.tp = tp, p.pp = pp, p.dp = dp, p.cp = cp, p.vpp = vpp;
              p.ep = ep, p.etp = etp == tp ? 0 : etp;
              if (std::int64_t{tp} * cp * dp % (std::int64_t{ep} * etp) != 0) continue;
              const bool dp_group = dp * cp > 1;
              for (const ShardingTraits& st : all_sharding_traits()) {  // table order: zero0..3, fsdp, hsdp
                const Sharding s = st.scheme;
                if (!allowed(f.sharding, s)) continue;
                if (ep > 1 && f.sharding.empty() && st.default_stack != Stack::Megatron) continue;
                p.sharding = s;
                p.hsdp_group = 0;
                if (!st.shards_optimizer) {
                  plans.push_back(p);
                } else if (st.hierarchical) {
                  if (!st.in_sweep_with_pp && pp > 1 && f.sharding.empty()) continue;
                  if ((tp * cp) >= G || G % (tp * cp) != 0) continue;
                  const int n = G / (tp * cp);
                  if (n <= 1 || n >= dp || dp % n != 0) continue;
                  p.hsdp_group = n;
                  plans.push_back(p);
                } else {
                  if (!dp_group) continue;
                  if (!st.in_sweep_with_pp && pp > 1 && f.sharding.empty()) continue;
                  plans.push_back(p);
                }
              }
              }
              for (const Plan& plan : plans)
                for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full, Recompute::Op}) {
                  if (!allowed(f.recompute, r)) continue;
                  // torchtitan's per-op policy only when --recompute lists it (a PyTorch-stack policy; plan_error
                  // below drops it on the other stacks).
                  if (r == Recompute::Op && f.recompute.empty()) continue;
                  for (int sp = 0; sp <= (tp > 1 ? 1 : 0); ++sp) {
                    if (!allowed(f.sp, sp)) continue;
                    if (m.is_moe() && tp > 1 && sp == 0 && f.sp.empty()) continue;
                    if (sp && (t.seq / cp) % tp != 0) continue;
                    Candidate c{plan, t};
                    c.train.mbs = mbs;
                    c.train.recompute = r;
                    c.train.sp = sp != 0;
                    c.train.sp_auto = false;
                    c.train.schedule = sched;
                    c.train = resolve_training(c.plan, m, c.train);  // stack, TP overlap, buckets per plan
                    if (plan_error(c.plan, m, hw, c.train)) continue;  // safety net: the loops above already agree
                    out.push_back(std::move(c));
                  }
                }
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace parsim
