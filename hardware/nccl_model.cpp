// parsim hardware/nccl_model.cpp — NCCL's choice of algorithm, protocol and channel count (see nccl_model.hpp for the
// NCCL v2.30.7 files this follows). Two parts:
//  1. make_comm: the outcome of NCCL's topology search for a communicator on parsim's node model. NCCL tries speeds
//     from a per-architecture speed array (search.cc speedArrayIntra/Inter, sm90…, sm100…) and keeps the solution with
//     the most channels × speed that fits the links: inside a node every ring channel takes `speed` of a GPU's NVLink
//     bandwidth (links × SMxx_NVLINK_BW, topo.h); across nodes each channel also leaves through one NIC (NIC speed =
//     Gb/s / 8). ncclTopoDupChannels doubles fast channels, connect.cc doubles the ring/tree channel count again, and
//     for 2+ nodes the tree's intra-node speed may rise to twice the inter speed (search.cc pass 2). The NVLS graph
//     has one head per local GPU. This is the search's result for homogeneous NVSwitch/xGMI nodes with GPUDirect
//     NICs, not the search itself [D].
//  2. tuning_table/estimate_us/choose: ncclTopoTuneModel, ncclTopoGetAlgoTime and topoGetAlgoInfo transcribed for the
//     collectives parsim models (AllReduce, AllGather, ReduceScatter, Broadcast).
#include "hardware/nccl_model.hpp"
#include "sim/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace parsim::nccl {

// ---- tuning.cc ncclTunerConstantsDefaults (rows: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT;
//      columns: LL, LL128, Simple) ----
const double kBaseLat[kNumAlgos][kNumProtos] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0},
                                                {0, 0, 0},        {0, 0, 0},        {8.0, 8.0, 8.0}};
const double kHwLatNvlink[kNumAlgos][kNumProtos] = {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8},
                                                    {0, 0, 25},       {0, 0, 25},      {0, 0, 4.0}};
const double kHwLatPci[kNumAlgos][kNumProtos] = {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8},
                                                 {0, 0, 0},       {0, 0, 0},       {0, 0, 4.0}};
const double kHwLatNet[kNumAlgos][kNumProtos] = {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30},
                                                 {0, 0, 18},     {0, 0, 20.9},     {0, 0, 14}};

namespace {

// [index1][index2]: index1 = GPU generation inside a node (0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell) or the CPU
// across nodes (0 Intel, 1 AMD); index2 = 1 node, 2 nodes, more.
constexpr double kLlMaxBw[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
constexpr double kPerChRingLL128[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}};
constexpr double kPerChTreeLL128[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
constexpr double kPerChTree[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
constexpr double kPerChNvlsTree[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};
constexpr double kNvlsEfficiency[4] = {0.0, 0.0, 0.85, 0.74};
// ncclTopoGetAlgoTime: tree bandwidth correction by log2(bytes/64), per protocol.
constexpr double kTreeCorrection[kNumProtos][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

// search.cc speed arrays (GB/s per channel).
const std::vector<double> kSpeedIntra = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
const std::vector<double> kSpeedInter = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                         7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
const std::vector<double> kSm90SpeedIntra = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
const std::vector<double> kSm90SpeedInter = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                             15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
const std::vector<double> kSm100SpeedIntra = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
const std::vector<double> kSm100SpeedInter = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                              20.0, 17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

constexpr int kMaxChannels = 64;          // MAXCHANNELS (device.h)
constexpr int kGraphMaxChannels = 32;     // ringGraph->maxChannels = MAXCHANNELS / 2 (init.cc)
[[maybe_unused]] constexpr double kPciBw = 12.0;  // PCI_BW (topo.h)

// ⌊x⌋ channels, at most kGraphMaxChannels, clamped in floating point before the cast: a free or very fast network
// (tests' with_free_network, 1e18 B/s) made x ≈ 2.6e19, beyond int (UBSan, found by the sanitized suite).
int channels_at_most(double x) {
  return static_cast<int>(std::clamp(std::floor(x + 1e-9), 0.0, static_cast<double>(kGraphMaxChannels)));
}

const std::vector<double>& speeds(int cc, bool inter) {
  if (cc >= 3) return inter ? kSm100SpeedInter : kSm100SpeedIntra;
  if (cc == 2) return inter ? kSm90SpeedInter : kSm90SpeedIntra;
  return inter ? kSpeedInter : kSpeedIntra;
}
double first_speed_at_most(const std::vector<double>& arr, double limit) {
  for (double s : arr)
    if (s <= limit + 1e-9) return s;
  return arr.back();
}
int log2i(double x) { return x >= 1 ? static_cast<int>(std::floor(std::log2(x))) : 0; }

// ncclTopoDupChannels: fast channels are duplicated (search.cc).
void dup_channels(int cc, int& n, double& s) {
  if (s < 25.0) return;
  if (cc >= 2 && s < 50.0 && n > 4) return;
  const int n2 = std::min(2 * n, kGraphMaxChannels);
  s /= std::ceil(static_cast<double>(n2) / n);
  n = n2;
}

bool algo_enabled(const Comm& c, Algo a) {
  switch (a) {
    case kTree: return c.algorithms & kAlgoTree;
    case kRing: return c.algorithms & kAlgoRing;
    case kCollNetDirect:
    case kCollNetChain: return (c.algorithms & kAlgoCollNet) && c.collnet;
    case kNVLS: return (c.algorithms & kAlgoNVLS) && c.nvls && (c.nnodes == 1 || c.collnet);
    case kNVLSTree: return (c.algorithms & kAlgoNVLSTree) && c.nvls && c.nnodes > 1;
    case kPAT: return (c.algorithms & kAlgoPAT) && c.ppn == 1 && c.nnodes > 1;
    default: return false;
  }
}
bool proto_enabled(const Comm& c, Proto p) {
  const unsigned bit = p == kLL ? kProtoLL : p == kLL128 ? kProtoLL128 : kProtoSimple;
  return c.protocols & bit;
}

}  // namespace

Comm make_comm(const Hardware& hw, const GroupShape& g) {
  Comm c;
  c.nranks = g.size, c.nnodes = g.nodes, c.ppn = g.per_node;
  switch (hw.gpu.arch) {
    case GpuArch::Ampere: c.cc = 1; break;
    case GpuArch::Blackwell: c.cc = 3; break;
    default: c.cc = 2; break;  // Hopper; CDNA uses Hopper's tables in the absence of RCCL's own [U]
  }
  c.cpu = hw.node.cpu;
  c.protocols = hw.comm.protocols;
  c.algorithms = hw.comm.algorithms;
  c.net_latency_us = hw.comm.net_latency_s * 1e6;
  const LinkTier& up = hw.node.intra();
  const bool mesh = up.topology == IntraTopology::FullMesh;
  // Per-link bandwidth in NCCL's topology (topo.h SM80/SM90/SM100_NVLINK_BW); for an xGMI mesh the link's nominal
  // per-direction figure.
  double link = hw.gpu.arch == GpuArch::Ampere ? 20.0 : hw.gpu.arch == GpuArch::Blackwell ? 40.1 : 20.6;
  if (mesh) link = up.bw_Bps_unidir / std::max(up.links_per_gpu, 1) / 1e9;
  const int links = std::max(up.links_per_gpu, 1);
  // maxBw: the best GPU-to-GPU path (one link on a mesh, the whole NVSwitch port otherwise); totalBw: all links.
  const double total_bw = mesh ? link * std::max(c.ppn - 1, 1) : link * links;
  const double max_bw = mesh ? link : total_bw;

  int n = 1;
  double s = 0;
  if (c.nnodes == 1) {
    s = first_speed_at_most(speeds(c.cc, false), max_bw);
    n = std::max(1, channels_at_most(total_bw / s));
  } else {
    const LinkTier& out = hw.node.inter();
    const double nic = out.nic_bits_per_s / 8e9;
    // NICs near this communicator's ranks: the node's NICs in proportion to the ranks it has there (one per GPU on a
    // DGX; p5 has four per GPU, p4de one per two GPUs).
    const int nics = std::max(1, static_cast<int>(std::lround(static_cast<double>(out.nics_per_node) * c.ppn /
                                                              hw.node.gpus_per_node)));
    double best = 0;
    for (double sp : speeds(c.cc, true)) {
      if (sp > nic + 1e-9) continue;
      int ch = channels_at_most(nics * std::floor(nic / sp + 1e-9));
      if (c.ppn > 1) ch = std::min(ch, channels_at_most(total_bw / sp));  // NVLink budget
      if (ch >= 1 && ch * sp > best + 1e-9) best = ch * sp, n = ch, s = sp;
    }
    if (best == 0) n = 1, s = speeds(c.cc, true).back();
  }
  dup_channels(c.cc, n, s);
  c.graph_channels = n;
  c.ring_bw_intra = c.ring_bw_inter = s;
  c.tree_bw_intra = c.tree_bw_inter = s;
  if (c.nnodes > 1) {  // search.cc pass 2: "increase bwIntra for trees (2 nodes or collnet)"
    for (double x : speeds(c.cc, true))
      if (x <= 2 * s + 1e-9 && (c.ppn == 1 || n * x <= total_bw + 1e-9)) {
        c.tree_bw_intra = std::max(s, x);
        break;
      }
  }
  c.channels = std::clamp(std::min(kMaxChannels, 2 * n), std::max(1, hw.comm.min_channels), hw.comm.max_channels);

  c.nvls = up.nvls && !mesh && c.ppn >= std::max(2, up.nvls_min_gpus);
  if (c.nvls) {
    c.nvls_heads = c.ppn;
    c.nvls_bw_intra = first_speed_at_most(speeds(c.cc, c.nnodes > 1), total_bw / c.ppn);
    if (c.nnodes > 1) {
      const LinkTier& out = hw.node.inter();
      const double nic_per_gpu = std::max(1.0, static_cast<double>(out.nics_per_node) / hw.node.gpus_per_node) *
                                 out.nic_bits_per_s / 8e9;
      c.nvls_bw_inter = first_speed_at_most(speeds(c.cc, true), nic_per_gpu);
    } else {
      // One node: search.cc pass 2 raises the NVLS graph's bwInter up to twice bwIntra (nothing limits it there).
      c.nvls_bw_inter = first_speed_at_most(speeds(c.cc, false), 2 * c.nvls_bw_intra);
    }
    c.nvls_channels = c.cc >= 3 ? (c.nnodes > 1 ? 32 : 24) : 16;  // nvls.cc NVLS_NCHANNELS_SM90 / SM100(_NVL)
  }
  const LinkTier* out = hw.node.scale_out();
  c.collnet = c.nnodes > 1 && out && out->sharp;
  return c;
}

Table tuning_table(const Comm& c, Func f) {
  Table t;
  const int n = c.nranks, N = c.nnodes;
  if (n <= 1) return t;
  const double ppn = static_cast<double>(n) / N;
  const int i2 = N <= 2 ? N - 1 : 2;
  const int i1 = N == 1 ? c.cc : (c.cpu == CpuVendor::AMD ? 1 : 0);
  const double ll_max = kLlMaxBw[i1][i2];
  const double nsteps = f == kAllReduce ? 2.0 * (n - 1) : (f == kAllGather || f == kReduceScatter) ? n - 1.0 : n;
  const bool ag_rs = f == kAllGather || f == kReduceScatter;
  for (int ai = 0; ai < kNumAlgos; ++ai) {
    const Algo a = static_cast<Algo>(ai);
    if (f == kBroadcast && a != kRing) continue;
    if (ag_rs && a != kPAT && a != kRing && a != kNVLS && a != kCollNetDirect) continue;
    if (f == kAllReduce && a == kPAT) continue;
    for (int pi = 0; pi < kNumProtos; ++pi) {
      const Proto p = static_cast<Proto>(pi);
      if ((a == kNVLS || a == kNVLSTree || a == kPAT) && p != kSimple) continue;
      if ((a == kCollNetDirect || a == kCollNetChain) && p != kSimple) continue;
      const bool collnet = a == kCollNetDirect || a == kCollNetChain;
      int nch = c.graph_channels;
      double bw_intra = a == kTree ? c.tree_bw_intra : c.ring_bw_intra;
      double bw_inter = a == kTree ? c.tree_bw_inter : c.ring_bw_inter;
      if (a == kNVLS || a == kNVLSTree) {
        if (!c.nvls) continue;
        nch = c.nvls_heads, bw_intra = c.nvls_bw_intra, bw_inter = c.nvls_bw_inter;
      }
      double bw = N <= 2 || collnet ? bw_intra : bw_inter;
      if (a == kNVLS || a == kNVLSTree) {
        if (nch < 2) continue;
        double intra = bw_intra * kNvlsEfficiency[c.cc] * (nch - 1) / nch;
        intra *= f == kAllReduce ? 2.0 : (ppn - 1) / ppn;
        const double inter = bw_inter * ((N <= 2 && a == kNVLSTree) ? 2 : 1);
        bw = std::min({intra, inter, a == kNVLSTree ? kPerChNvlsTree[c.cc][i2] : std::numeric_limits<double>::max()});
      }
      double bus = nch * bw;
      if (a == kRing && p == kLL) bus = std::min(ll_max, bus * .5);
      if (a == kRing && p == kLL128) bus = std::min(bus * 0.92, nch * kPerChRingLL128[c.cc][i2]);
      if (a == kTree && f == kAllReduce) bus = std::min(bus * .92, nch * kPerChTree[c.cc][i2]);
      if (a == kTree && p == kLL) bus = std::min(bus / 3.8, ll_max);
      if (a == kTree && p == kLL128) bus = std::min(bus * (N == 1 ? 7.0 / 9.0 : 120.0 / 128.0), nch * kPerChTreeLL128[c.cc][i2]);
      if (a == kPAT) bus *= .75;
      if (a == kCollNetDirect) {
        if (ag_rs) {
          bus = ppn * std::min(bw_intra, bw_inter * 0.9);
        } else {
          double factor = ppn / nch;  // GPU/NIC ratio
          factor -= (factor - 1) / 2;
          bus /= std::max(factor, 1e-9);
          if (c.cc >= 2) bus *= .85;
        }
      }
      if (!(a != kRing && ag_rs)) bus *= (a == kRing || a == kNVLS || a == kNVLSTree) ? n / nsteps : .5;
      t.bw[a][p] = bus;
      // Latency.
      double lat = kBaseLat[a][p];
      double intra_lat = c.nvlink ? kHwLatNvlink[a][p] : kHwLatPci[a][p];
      double inter_lat = (ppn == 1 ? kHwLatNet[kTree][p] : kHwLatNet[a][p]) + c.net_latency_us;
      if (p == kSimple) inter_lat += c.net_latency_us;  // "flush extra latency"
      if (a == kRing) {
        if (f == kBroadcast) {
          lat += N == 1 ? intra_lat : kHwLatNet[a][p];
        } else {
          double net_overhead = 0;
          if (N > 1) {
            net_overhead = c.cpu == CpuVendor::AMD ? 2.0 : 1.0;  // getNetOverhead: 1 µs Intel/other, 2 µs AMD
            if (p == kSimple) net_overhead *= 3;
          }
          intra_lat = std::max(intra_lat, net_overhead);
          const double n_inter = N == 1 ? 0 : f == kAllReduce ? 2.0 * (N - 1) : N - 1.0;
          lat += (nsteps - n_inter) * intra_lat + n_inter * inter_lat;
        }
      } else if (a == kTree) {
        if (f == kAllReduce) lat += 2 * ((ppn - 1) * intra_lat + log2i(N) * inter_lat);
      } else if (a == kCollNetDirect) {
        lat += 2 * (std::min(1.0, ppn - 1) * intra_lat + (ppn - 1) * 0.4) + inter_lat;
      } else if (a == kCollNetChain) {
        lat += 2 * (ppn - 1) * intra_lat + inter_lat;
      } else if (a == kNVLS) {
        lat = intra_lat + (N > 1 ? inter_lat : 0);
      } else if (a == kNVLSTree) {
        lat += intra_lat + 2 * log2i(N) * inter_lat;
      } else if (a == kPAT) {
        if (ag_rs) lat += log2i(N) * (inter_lat / 3.5) + n * 2.8;
      }
      t.lat[a][p] = lat;
    }
  }
  return t;
}

double estimate_us(const Comm& c, const Table& t, Func f, Algo a, Proto p, double bytes) {
  double bw = t.bw[a][p];
  double lat = t.lat[a][p];
  if (bw <= 0 || !algo_enabled(c, a) || !proto_enabled(c, p)) return -1;
  if (a == kTree && f != kAllReduce) return -1;
  const double units = std::floor(bytes / 64);
  const int log_size = units >= 1 ? static_cast<int>(std::floor(std::log2(units))) : -1;
  if (a == kTree && f == kAllReduce && log_size >= 0 && log_size < 23) bw *= kTreeCorrection[p][log_size];
  if (a == kNVLSTree && f == kAllReduce && log_size >= 0 && log_size < 24 && c.cc >= 3 && c.cpu != CpuVendor::Arm)
    bw *= kTreeCorrection[p][log_size];
  if (a == kRing && p == kSimple && c.nnodes > 1 && f == kAllReduce && bytes / (c.channels * c.nranks) >= 64)
    lat *= 1.4;  // "Plateau effect of ring" (compute capability ≥ 8.0)
  return lat + bytes / (1000 * bw);
}

namespace {
// topoGetAlgoInfo: maxThreads (tuning.cc: 512 Simple/LL, 640 LL128) × per-thread threshold (comm.h: LL 8 B, LL128
// 8 B, Simple 64 B; ring LL × nRanks) = bytes a channel must get before another channel is worth its launch.
double bytes_per_channel_threshold(const Comm& c, Algo a, Proto p) {
  const double nt = p == kLL128 ? 640 : 512;
  double threshold = p == kSimple ? 64 : 8;
  if (a == kRing && p == kLL) threshold *= c.nranks;
  return nt * threshold;
}
}  // namespace

int channels_for(const Comm& c, Algo a, Proto p, double bytes) {
  if (a == kNVLS || a == kNVLSTree)
    return c.nnodes > 1 && a == kNVLS ? std::min(c.nvls_channels, c.channels) : c.nvls_channels;
  int nc = c.channels;
  if (a == kCollNetDirect || a == kCollNetChain) return nc;
  const double per = bytes_per_channel_threshold(c, a, p);
  while (bytes < nc * per && nc >= 2) --nc;
  return nc;
}

double channels_continuous(const Comm& c, Algo a, Proto p, double bytes) {
  if (a == kNVLS || a == kNVLSTree || a == kCollNetDirect || a == kCollNetChain) return channels_for(c, a, p, bytes);
  return std::clamp(bytes / bytes_per_channel_threshold(c, a, p), 1.0, static_cast<double>(c.channels));
}

Choice choose(const Comm& c, Func f, double bytes) { return choose(c, tuning_table(c, f), f, bytes); }

Choice choose(const Comm& c, const Table& t, Func f, double bytes) {
  Choice best;
  best.estimate_us = std::numeric_limits<double>::infinity();
  for (int ai = 0; ai < kNumAlgos; ++ai)
    for (int pi = 0; pi < kNumProtos; ++pi) {
      const double e = estimate_us(c, t, f, static_cast<Algo>(ai), static_cast<Proto>(pi), bytes);
      if (e >= 0 && e < best.estimate_us) best.algo = static_cast<Algo>(ai), best.proto = static_cast<Proto>(pi), best.estimate_us = e;
    }
  if (!std::isfinite(best.estimate_us)) {  // nothing enabled fits (e.g. NCCL_PROTO=LL128 only on a PCIe node)
    best.algo = kRing, best.proto = kSimple, best.estimate_us = 0;
  }
  best.channels = channels_for(c, best.algo, best.proto, bytes);
  return best;
}

Selector::Selector(const Comm& c, const Table& t, Func f, int only_algo) {
  for (int ai = 0; ai < kNumAlgos; ++ai)
    for (int pi = 0; pi < kNumProtos; ++pi) {
      if (only_algo >= 0 && ai != only_algo) continue;
      const Algo a = static_cast<Algo>(ai);
      const Proto p = static_cast<Proto>(pi);
      if (t.bw[a][p] <= 0 || !algo_enabled(c, a) || !proto_enabled(c, p)) continue;
      if (a == kTree && f != kAllReduce) continue;
      Opt& o = opts_[n_++];
      o.a = a, o.p = p, o.lat = t.lat[a][p], o.bw = t.bw[a][p];
      o.tree_corr = (a == kTree && f == kAllReduce) ||
                    (a == kNVLSTree && f == kAllReduce && c.cc >= 3 && c.cpu != CpuVendor::Arm);
      o.plateau = a == kRing && p == kSimple && c.nnodes > 1 && f == kAllReduce;
    }
  plateau_bytes_ = 64.0 * c.channels * c.nranks;
}

// The estimate of option i over a stretch of sizes where NCCL's corrections are constant: lat + bytes · slope.
void Selector::line(int i, double bytes, double& lat, double& slope) const {
  const Opt& o = opts_[i];
  double bw = o.bw;
  if (o.tree_corr) {
    const double units = std::floor(bytes / 64);
    const int log_size = units >= 1 ? static_cast<int>(std::floor(std::log2(units))) : -1;
    const int limit = o.a == kTree ? 23 : 24;
    if (log_size >= 0 && log_size < limit) bw *= kTreeCorrection[o.p][log_size];
  }
  lat = o.plateau && bytes >= plateau_bytes_ ? o.lat * 1.4 : o.lat;
  slope = 1 / (1000 * bw);
}

int Selector::argmin(double bytes) const {
  int best = -1;
  double best_t = std::numeric_limits<double>::infinity();
  for (int i = 0; i < n_; ++i) {
    double lat, slope;
    line(i, bytes, lat, slope);
    const double t = lat + bytes * slope;
    if (t < best_t) best = i, best_t = t;
  }
  return best;
}

void Selector::later_choices(double bytes, bool out[kNumAlgos][kNumProtos]) const {
  if (n_ == 0) return;
  // Between consecutive breakpoints (the tree correction's powers of two of bytes/64, the ring plateau threshold)
  // every estimate is a line in bytes; walk each stretch's lower envelope from its start, jumping to the nearest
  // crossing by an option with a smaller slope. After the last breakpoint the envelope runs to infinity.
  bool any_corr = false;
  for (int i = 0; i < n_; ++i) any_corr |= opts_[i].tree_corr;
  constexpr int kMax = static_cast<int>(kNumAlgos) * static_cast<int>(kNumProtos);
  double lat[kMax], slope[kMax];
  double lo = std::max(bytes, 0.0);
  for (int guard = 0; guard < 64; ++guard) {
    const double units = std::floor(lo / 64);
    const int bucket = units >= 1 ? static_cast<int>(std::floor(std::log2(units))) : -1;
    double hi = std::numeric_limits<double>::infinity();
    if (any_corr && bucket < 24) hi = 64.0 * std::ldexp(1.0, bucket + 1);
    const bool plateau = lo >= plateau_bytes_;
    if (!plateau && plateau_bytes_ < hi) hi = plateau_bytes_;
    for (int i = 0; i < n_; ++i) {
      const Opt& o = opts_[i];
      double bw = o.bw;
      if (o.tree_corr && bucket >= 0 && bucket < (o.a == kTree ? 23 : 24)) bw *= kTreeCorrection[o.p][bucket];
      lat[i] = o.plateau && plateau ? o.lat * 1.4 : o.lat;
      slope[i] = 1 / (1000 * bw);
    }
    int cur = 0;
    for (int i = 1; i < n_; ++i)
      if (lat[i] + lo * slope[i] < lat[cur] + lo * slope[cur]) cur = i;
    double x = lo;
    for (int steps = 0; steps <= n_; ++steps) {
      out[opts_[cur].a][opts_[cur].p] = true;
      int next = -1;
      double next_x = hi;
      for (int j = 0; j < n_; ++j) {
        if (slope[j] >= slope[cur]) continue;  // never overtakes from here on
        const double xj = (lat[j] - lat[cur]) / (slope[cur] - slope[j]);
        if (xj > x && xj < next_x) next_x = xj, next = j;
      }
      if (next < 0) break;
      cur = next, x = next_x;
    }
    if (!std::isfinite(hi)) break;
    lo = hi;
  }
}

}  // namespace parsim::nccl
