// parsim hardware/collectives.cpp — how long an NCCL/RCCL collective takes (domain notes §7).
//
// Two steps, as in NCCL itself:
//  1. Choice (nccl_model.cpp): the algorithm, protocol and channel count NCCL's tuner picks for this communicator and
//     message size, from its own latency/bandwidth tables (NVIDIA/nccl v2.30.7 src/graph/tuning.cc) and the
//     cluster's collective-library configuration (hardware file "collectives": protocols, algorithms, buffer sizes,
//     the latency a net plugin declares). NCCL's estimate only ranks the options.
//  2. Time (here): what that choice costs on this hardware, from the links' achievable bandwidths and latencies and
//     the way the algorithm moves data in chunks through a pipeline of hops.
//
// Notation: S bytes (all-reduce buffer, all-gather output, reduce-scatter input), n ranks = p per node × N nodes.
//   B_up   per-GPU achievable scale-up bandwidth: NVSwitch nominal × efficiency (= measured ring busbw); on an xGMI
//          mesh (p−1) links × link × efficiency (RCCL's rings use every link to the group's peers)
//   B_nic  per-node NIC bandwidth this communicator gets: p × (the GPU's NIC share, nic_share_Bps, with all
//          `concurrent_per_node` GPUs of the node talking) × NIC efficiency × nic_fraction
//   c      channels NCCL runs (fewer for small messages); C = the communicator's channel count. Each channel is one
//          CTA moving its 1/c of the data; a channel's share of the links is B_up/C and B_nic/C.
//   e      protocol data efficiency: LL 0.5 (8-byte stores, 4 of them a flag), LL128 120/128, Simple 1 (NCCL
//          src/include/device.h line formats), with NCCL's per-channel caps for LL/LL128 (tuning.cc llMaxBws,
//          perChMaxRingLL128Bws, perChMaxTreeLL128Bws) as the protocols' measured limits.
// Latency L: NCCL's own latency structure (tuning.cc) with the physical per-hop costs: base latency + per step
//   hwLat[NVLink] (+ the scale-up tier's extra latency) inside a node and hwLat[NET] + the fabric's one-way latency
//   (scale_out.latency_us; ~0 on InfiniBand, whose costs NCCL's tables already are, 20 µs on EFA, …) per network step,
//   plus that fabric latency again for the GPUDirect flush read after a Simple receive where the GPU needs one (before
//   Hopper). Unlike NCCL's tuner, the latency a net plugin declares (collectives.net_latency_us) does not enter here:
//   it is a tuning knob, not a measurement.
// Time per algorithm:
//   Ring (AR, AG, RS):  L + f·(S/c)/b,  f = 2(n−1)/n (AR) or (n−1)/n, b = e·min(B_up/C, B_nic/C) (network only when
//     p = 1); NCCL's "ring plateau" factor 1.4 on the latency of multi-node Simple all-reduces (tuning.cc).
//   Tree (AR; NCCL's double binary tree across nodes, a chain of p GPUs inside each): a pipeline of chunks of size
//     k_c (Simple NCCL_BUFFSIZE/8, LL 32 KiB, LL128 ≈ 576 KB halved for mid sizes as calcCollChunking does) through
//     2(p−1) NVLink hops and 2⌈log₂N⌉ network hops: L + Σ hop(chunk) + (k−1)·max hop(chunk), k = ⌈(S/c)/chunk⌉; a
//     network hop moves min(2, N/2)·chunk (interior tree nodes talk to parent and children) at e·B_nic/C. Mid-size
//     messages pay the whole pipeline depth per chunk: NCCL's mid-size ramp.
//   NVLS (AR, one node): NVLink SHARP; units of one NVLS chunk per (channel, head) pair, P = nvlsChannels × p units
//     in flight, two pipeline stages (multimem reduce, multimem store): L + (k+1)·unit·P/B_nvls, with
//     B_nvls = B·p/(p+1)·nvls_efficiency (ideal algbw B·n/(n+1), nccl-tests PR #239) and the chunk shrinking for
//     smaller messages (calcCollChunking). NVLSTree (AR, across nodes): the same with 2 + 2⌈log₂N⌉ stages and
//     B = min(B_nvls, B_nic) (2 nodes; B_nic/2 for more).
//   CollNet (SHARP, AR): L + max(2(p−1)/p·S/B_up, (S/p)/(B_nic/p)) plus one chunk of pipeline fill.
//   PAT (AG/RS with one GPU per node): L + (n−1)/n·S/(0.75·e·B_nic) (tuning.cc's 0.75).
//   Broadcast: a chain pipeline over the ring's n−1 hops.
//   AllToAll (NCCL grouped send/recv, p2p channels): each rank sends S/n to every peer at once: intra-node peers
//     through its scale-up port, the others through its NIC share, concurrently:
//     base + hop latency + max((p−1)·S/n / (e·B_up), (n−p)·S/n / (e·B_nic/p)); LL below NCCL_P2P_LL_THRESHOLD
//     (16 KiB per channel, enqueue.cc), Simple above.
//   SendRecv: one message to a neighbour: base + hop latency + S/(e·B_up) inside a node, S/(e·B_nic/p) across.
//   Hierarchical (forced only; not an NCCL algorithm): intra reduce-scatter, inter ring all-reduce of S/p with one GPU
//     per node on its NIC share, intra all-gather, one after the other.
// A forced algorithm is run with the protocol NCCL would pick for it; one the collective cannot use falls back to
// Auto, and CollectiveCost says what ran.
#include "hardware/hardware.hpp"
#include "hardware/nccl_model.hpp"
#include "sim/core/error.hpp"
#include "sim/core/text.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace parsim {

std::string to_string(Collective c) {
  switch (c) {
    case Collective::AllReduce: return "all_reduce";
    case Collective::AllGather: return "all_gather";
    case Collective::ReduceScatter: return "reduce_scatter";
    case Collective::AllToAll: return "all_to_all";
    case Collective::SendRecv: return "send_recv";
    case Collective::Broadcast: return "broadcast";
  }
  return "?";
}

std::string to_string(CollAlgo a) {
  switch (a) {
    case CollAlgo::Auto: return "auto";
    case CollAlgo::Ring: return "ring";
    case CollAlgo::Tree: return "tree";
    case CollAlgo::Hierarchical: return "hierarchical";
    case CollAlgo::NVLS: return "nvls";
    case CollAlgo::Direct: return "direct";
    case CollAlgo::NVLSTree: return "nvls_tree";
    case CollAlgo::CollNet: return "collnet";
    case CollAlgo::PAT: return "pat";
  }
  return "?";
}

std::string to_string(CollProtocol p) {
  switch (p) {
    case CollProtocol::LL: return "LL";
    case CollProtocol::LL128: return "LL128";
    case CollProtocol::Simple: return "Simple";
  }
  return "?";
}

double bus_factor(Collective c, int n) {
  if (n < 1) throw InputError("collective group size must be ≥ 1, got " + std::to_string(n));
  switch (c) {
    case Collective::AllReduce: return 2.0 * (n - 1) / n;
    case Collective::AllGather:
    case Collective::ReduceScatter:
    case Collective::AllToAll: return static_cast<double>(n - 1) / n;
    default: return 1.0;
  }
}

namespace {

using namespace nccl;

// NCCL_P2P_LL_THRESHOLD (enqueue.cc): p2p messages up to this many bytes per channel use LL.
constexpr double kP2pLLThreshold = 16384;
constexpr double kLLChunk = 524288.0 / 8 / 2;  // DEFAULT_LL_BUFFSIZE / NCCL_STEPS, halved (LL lines carry 8 B of 16)
constexpr double kLL128Chunk = 120.0 * 640 * 8 * 8 / 8 * 120 / 128;  // DEFAULT_LL128_BUFFSIZE / NCCL_STEPS, data part

double proto_efficiency(Proto p) { return p == kLL ? 0.5 : p == kLL128 ? 120.0 / 128.0 : 1.0; }
CollProtocol to_proto(Proto p) { return p == kLL ? CollProtocol::LL : p == kLL128 ? CollProtocol::LL128 : CollProtocol::Simple; }
CollAlgo to_algo(Algo a) {
  switch (a) {
    case kTree: return CollAlgo::Tree;
    case kRing: return CollAlgo::Ring;
    case kCollNetDirect:
    case kCollNetChain: return CollAlgo::CollNet;
    case kNVLS: return CollAlgo::NVLS;
    case kNVLSTree: return CollAlgo::NVLSTree;
    case kPAT: return CollAlgo::PAT;
    default: return CollAlgo::Ring;
  }
}
Func to_func(Collective c) {
  switch (c) {
    case Collective::AllGather: return kAllGather;
    case Collective::ReduceScatter: return kReduceScatter;
    case Collective::Broadcast: return kBroadcast;
    default: return kAllReduce;
  }
}

// The link side of one call.
struct Links {
  double B_up = 0;      // per GPU, achievable, bytes/s
  double B_nic = 0;     // per node for this communicator, achievable, bytes/s
  double nic_gpu = 0;   // B_nic / p
  double up_extra = 0;  // extra latency per scale-up hop, µs
  double net_extra = 0; // fabric one-way latency per network step, µs
  bool flush = false;
  bool latency = true;
};

Links links_of(const Hardware& hw, const GroupShape& g) {
  Links l;
  const LinkTier& up = hw.node.intra();
  if (up.topology == IntraTopology::FullMesh)
    l.B_up = std::max(g.per_node - 1, 1) * up.bw_Bps_unidir / std::max(up.links_per_gpu, 1) * up.efficiency;
  else
    l.B_up = up.bw_Bps_unidir * up.efficiency;
  l.up_extra = up.latency_s * 1e6;
  if (const LinkTier* out = hw.node.scale_out()) {
    l.nic_gpu = nic_share_Bps(hw.node, std::max(g.concurrent_per_node, g.per_node)) * out->efficiency * g.nic_fraction;
    l.B_nic = l.nic_gpu * g.per_node;
    l.net_extra = out->latency_s * 1e6;
  }
  l.flush = hw.comm.gdr_flush;
  l.latency = hw.comm.model_latency;
  return l;
}

// Physical latency (µs) of algorithm a / protocol p for collective f: NCCL's structure, physical per-hop costs.
double latency_us(const Comm& c, const Links& l, Func f, Algo a, Proto p, double bytes, int channels) {
  if (!l.latency) return 0;
  const int n = c.nranks, N = c.nnodes;
  const double ppn = static_cast<double>(n) / N;
  const double nsteps = f == kAllReduce ? 2.0 * (n - 1) : (f == kAllGather || f == kReduceScatter) ? n - 1.0 : n;
  const double intra = kHwLatNvlink[a][p] + l.up_extra;
  double inter = (ppn == 1 ? kHwLatNet[kTree][p] : kHwLatNet[a][p]) + l.net_extra;
  if (p == kSimple && l.flush) inter += l.net_extra;  // GPUDirect flush: a read of the received data through the NIC
  // One CPU proxy thread per GPU posts the network sends and receives of its channels (NCCL src/proxy.cc); NCCL
  // charges getNetOverhead (1 µs, 2 µs on AMD hosts, ×3 for Simple; tuning.cc) per ring step. A network step waits
  // for the proxy to post every operation of the channels it serves: 2·⌈channels/p⌉ of them.
  if (N > 1) {
    const double post = (c.cpu == CpuVendor::AMD ? 2.0 : 1.0) * (p == kSimple ? 3 : 1);
    inter += post * 2 * std::ceil(static_cast<double>(std::max(channels, 1)) / std::max(ppn, 1.0));
  }
  double lat = kBaseLat[a][p];
  switch (a) {
    case kRing: {
      if (f == kBroadcast) return lat + (n - N) * intra + (N - 1) * inter;
      double net_overhead = 0;
      if (N > 1) net_overhead = (c.cpu == CpuVendor::AMD ? 2.0 : 1.0) * (p == kSimple ? 3 : 1);
      const double n_inter = N == 1 ? 0 : f == kAllReduce ? 2.0 * (N - 1) : N - 1.0;
      lat += (nsteps - n_inter) * std::max(intra, net_overhead) + n_inter * inter;
      if (p == kSimple && N > 1 && f == kAllReduce && bytes / (c.channels * n) >= 64) lat *= 1.4;
      return lat;
    }
    case kTree: return lat + 2 * ((ppn - 1) * intra + std::ceil(std::log2(N)) * inter);
    case kNVLS: return intra + l.up_extra + (N > 1 ? inter : 0);
    case kNVLSTree: return intra + l.up_extra + 2 * std::ceil(std::log2(N)) * inter;
    case kCollNetDirect:
    case kCollNetChain: return lat + 2 * (std::min(1.0, ppn - 1) * intra + (ppn - 1) * 0.4) + inter;
    case kPAT: return lat + std::ceil(std::log2(N)) * (inter / 3.5) + n * 2.8;
    default: return lat;
  }
}

// NCCL's protocol caps as a limit on one channel's rate (bytes/s): LL's total bus bandwidth (llMaxBws) shared by the
// running channels, LL128's per-channel maximum (perChMaxRing/TreeLL128Bws).
double ll_cap(const Comm& c, Algo a, Proto p, double channels) {
  const int N = c.nnodes, i2 = N <= 2 ? N - 1 : 2;
  if (p == kLL) {
    static constexpr double kLlMax[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
    const int i1 = N == 1 ? c.cc : (c.cpu == CpuVendor::AMD ? 1 : 0);
    return kLlMax[i1][i2] * 1e9 / std::max(channels, 1.0);
  }
  if (p == kLL128) {
    static constexpr double kRing[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}};
    static constexpr double kTree[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
    return (a == nccl::kTree ? kTree : kRing)[c.cc][i2] * 1e9;
  }
  return std::numeric_limits<double>::infinity();
}

struct Result {
  double time_s = 0, latency_s = 0, nic_bytes = 0, nic_rate = 0;
};

// NCCL's measured tree efficiency at medium sizes (tuning.cc treeCorrectionFactor, one value per power of two of
// bytes/64), interpolated linearly in log2(bytes) between bucket centres so that cost grows smoothly with size.
double tree_correction(Proto p, double bytes) {
  static constexpr double kFactor[2][24] = {
      {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
      {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0}};
  if (p == kSimple || bytes < 64) return 1.0;
  const double x = std::log2(bytes / 64) - 0.5;  // bucket i covers [i, i+1) in log2(bytes/64); centre i + 0.5
  if (x <= 0) return kFactor[p][0];
  if (x >= 22) return 1.0;                        // NCCL applies the table below log2 = 23 only
  const int i = static_cast<int>(std::floor(x));
  const double w = x - i;
  const double hi = i + 1 >= 23 ? 1.0 : kFactor[p][i + 1];
  return (1 - w) * kFactor[p][i] + w * hi;
}

// Tree LL128 chunk (calcCollChunking): halved while each channel would get too few chunks to fill the pipeline.
double tree_chunk(const Hardware& hw, const Comm& c, Proto p, double bytes, double channels) {
  if (p == kLL) return kLLChunk;
  if (p == kSimple) return hw.comm.buffsize_bytes / 8;
  double chunk = kLL128Chunk;
  const double steps = 1 + std::floor(std::log2(c.nnodes)) + 0.1 * c.ppn;
  while (std::floor(bytes / (channels * chunk)) < steps * 64 / c.ppn && chunk > 131072) chunk /= 2;
  while (std::floor(bytes / (channels * chunk)) < steps * 16 / c.ppn && chunk > 32768) chunk /= 2;
  return chunk;
}

// NVLS / NVLSTree unit size (calcCollChunking): smaller units for smaller messages.
double nvls_chunk(const Hardware& hw, Algo a, double bytes, double units) {
  double chunk = hw.comm.nvls_chunk_bytes;
  if (a == kNVLS) {
    if (bytes < 64 * units * chunk && chunk > 65536) chunk = 65536;
    if (bytes < 8 * units * chunk && chunk > 32768) chunk = 32768;
    if (bytes < 2 * units * chunk && chunk > 16384) chunk = 16384;
  } else {
    chunk = std::min(chunk, hw.comm.nvls_tree_chunk_bytes);
    if (bytes < 32 * units * chunk && chunk > 262144) chunk = 262144;
    if (bytes < 16 * units * chunk && chunk > 131072) chunk = 131072;
    if (bytes < 4 * units * chunk && chunk > 65536) chunk = 65536;
    if (bytes < 1 * units * chunk && chunk > 32768) chunk = 32768;
  }
  return chunk;
}

// A pipeline of `depth` hops moving `data` bytes in chunks of at most `chunk`: the first chunk crosses every hop
// (depth_time for one chunk), the rest follow at the bottleneck hop's pace. Continuous in `data`.
double pipeline_s(double data, double chunk, double depth_time_per_byte, double bottleneck_per_byte) {
  if (data <= 0) return 0;
  const double c = std::min(chunk, data);
  return c * depth_time_per_byte + (data - c) * bottleneck_per_byte;
}

// Time of one NCCL collective algorithm (AR, AG, RS, Broadcast) at a given protocol. `nc` = channels running
// (integer, as NCCL reports it), `ncs` = the same without rounding (how the bytes split on average).
Result run_nccl(const Hardware& hw, const Comm& c, const Links& l, Collective coll, Algo a, Proto p, int nc, double ncs,
                double S) {
  const Func f = to_func(coll);
  const int n = c.nranks, N = c.nnodes, P = c.ppn;
  Result r;
  r.latency_s = latency_us(c, l, f, a, p, S, nc) * 1e-6;
  const double e = proto_efficiency(p);
  // A channel's rate: its share of the links among the channels running, at most what one channel (one CTA on one
  // path) gets in NCCL's topology search — unless the links' share with all channels running is larger — and under
  // the protocol's caps.
  const double active = std::max(ncs, 1.0), C = std::max(c.channels, 1);
  const bool nvls_graph = a == kNVLS || a == kNVLSTree;
  // NCCL's LL128 caps are per graph channel (busBw = nChannels × perChMax…); connect.cc runs each graph channel as
  // channels/graph_channels CTAs.
  const double split = nvls_graph ? 1.0 : static_cast<double>(c.graph_channels) / C;
  const double s_up = (a == kTree ? c.tree_bw_intra : nvls_graph ? c.nvls_bw_intra : c.ring_bw_intra) * 1e9;
  const double s_net = (a == kTree ? c.tree_bw_inter : nvls_graph ? c.nvls_bw_inter : c.ring_bw_inter) * 1e9;
  const double cap = p == kLL128 ? ll_cap(c, a, p, active) * split : ll_cap(c, a, p, active);
  const double bi = std::min({e * l.B_up / active, e * std::max(s_up, l.B_up / C), cap});
  const double bn = std::min({e * l.B_nic / active, e * std::max(s_net, l.B_nic / C), cap});
  double t = 0;
  switch (a) {
    case kRing: {
      const double b = N == 1 ? bi : P == 1 ? bn : std::min(bi, bn);
      if (f == kBroadcast) {
        // A chain pipeline over the n−1 hops in chunks (NCCL_BUFFSIZE/8 Simple, LL/LL128 line by line).
        const double chunk = p == kSimple ? hw.comm.buffsize_bytes / 8 : 0;
        t = pipeline_s(S / active, chunk > 0 ? chunk : S / active, (p == kSimple ? n - 1.0 : 1.0) / b, 1 / b);
        r.nic_bytes = N > 1 ? S / P : 0;
      } else {
        const double fac = f == kAllReduce ? 2.0 * (n - 1) / n : (n - 1.0) / n;
        t = fac * (S / active) / b;
        r.nic_bytes = N > 1 ? fac * S / P : 0;  // per node one network edge per channel, spread over its p GPUs
      }
      break;
    }
    case kTree: {
      // Up (reduce) and down (broadcast) both leave each chain GPU through its link: 2 bytes per byte of data.
      const double Sch = S / active;
      const double net_mult = N > 1 ? std::min(2.0, N / 2.0) : 0;
      const double up_pb = P > 1 ? 2 / bi : 0.0, net_pb = N > 1 ? net_mult / bn : 0.0;
      r.nic_bytes = N > 1 ? net_mult * S / P : 0;
      if (p != kSimple) {
        // LL/LL128 forward each line as it arrives (cut-through): no chunk pipeline to fill. NCCL measured that trees
        // deliver less than this at medium sizes and corrects its model by a per-size factor (tuning.cc
        // treeCorrectionFactor); for LL/LL128 parsim applies the same factor (Simple's loss is its chunk pipeline).
        t = Sch * std::max(up_pb, net_pb) / tree_correction(p, S);
        break;
      }
      // Simple synchronises per step: a chunk moves on once it has fully arrived (store and forward) through
      // 2(p−1) NVLink hops and 2⌈log₂N⌉ network hops.
      const double depth = 2.0 * (P - 1) / bi + (N > 1 ? 2 * std::ceil(std::log2(N)) * net_mult / bn : 0);
      t = pipeline_s(Sch, tree_chunk(hw, c, p, S, active), depth, std::max(up_pb, net_pb));
      break;
    }
    case kNVLS:
    case kNVLSTree: {
      const LinkTier& up = hw.node.intra();
      const double B_nvls = up.bw_Bps_unidir * P / (P + 1.0) * up.nvls_efficiency;
      const double units = static_cast<double>(c.nvls_channels) * P;
      double B = B_nvls, stages = 2;
      if (a == kNVLSTree) {
        B = std::min(B_nvls, l.B_nic * (N <= 2 ? 1.0 : 0.5));
        stages = 2 + 2 * std::ceil(std::log2(N));
        r.nic_bytes = (N <= 2 ? 1.0 : 2.0) * S / P;
      }
      // AG/RS through NVLS: each GPU still receives (p−1)/p of S through its port (multicast saves the sends).
      if (f != kAllReduce) B = up.bw_Bps_unidir * up.nvls_efficiency * P / (P - 1.0);
      // `units` chunks (one per channel and head) move at once; each takes `stages` steps to get through.
      const double u = std::min(nvls_chunk(hw, a, S, units), S / units);
      t = S > 0 ? (S + (stages - 1) * u * units) / B : 0;
      break;
    }
    case kCollNetDirect:
    case kCollNetChain: {
      const double intra = P > 1 ? 2.0 * (P - 1) / P * S / (e * l.B_up) : 0;
      const double inter = (S / P) / (e * l.nic_gpu);
      const double chunk = std::min(hw.comm.buffsize_bytes / 8, S / active);
      t = std::max(intra, inter) + chunk / bi + chunk / bn;
      r.nic_bytes = S / P;
      break;
    }
    case kPAT: {
      const double fac = (n - 1.0) / n;
      t = fac * S / (0.75 * e * l.nic_gpu);
      r.nic_bytes = fac * S;
      break;
    }
    default: break;
  }
  r.time_s = r.latency_s + t;
  r.nic_rate = e * l.nic_gpu;
  return r;
}

// Point-to-point: AllToAll (S/n to each peer) and SendRecv (S to one neighbour), as NCCL's p2p path runs them with
// protocol `proto`.
Result run_p2p(const Comm& c, const Links& l, Collective coll, double S, Proto proto) {
  const int n = c.nranks, N = c.nnodes, P = c.ppn;
  Result r;
  const double per_peer = coll == Collective::AllToAll ? S / n : S;
  const double e = proto_efficiency(proto);
  const bool up_hop = coll == Collective::AllToAll ? P > 1 : N == 1;
  const bool net_hop = N > 1;
  double lat = 0;
  if (l.latency) {
    double hop = 0;
    if (up_hop) hop = std::max(hop, kHwLatNvlink[kRing][proto] + l.up_extra);
    if (net_hop) {
      double net = kHwLatNet[kRing][proto] + l.net_extra + (proto == kSimple && l.flush ? l.net_extra : 0);
      // The proxy posts a send and a receive per peer it talks to across the network (getNetOverhead, as above).
      const double peers = coll == Collective::AllToAll ? n - P : 1;
      net += (c.cpu == CpuVendor::AMD ? 2.0 : 1.0) * (proto == kSimple ? 3 : 1) * 2 * std::ceil(peers / 8.0);
      hop = std::max(hop, net);
    }
    lat = kBaseLat[kRing][proto] + hop;
  }
  double t = 0;
  if (coll == Collective::AllToAll) {
    const double intra = (P - 1) * per_peer / (e * l.B_up);
    const double inter = N > 1 ? (n - P) * per_peer / (e * l.nic_gpu) : 0;
    t = std::max(intra, inter);
    r.nic_bytes = N > 1 ? (n - P) * per_peer : 0;
  } else {
    t = N == 1 ? S / (e * l.B_up) : S / (e * l.nic_gpu);
    r.nic_bytes = N > 1 ? S : 0;
  }
  r.latency_s = lat * 1e-6;
  r.time_s = r.latency_s + t;
  r.nic_rate = e * l.nic_gpu;
  return r;
}

Algo to_nccl(CollAlgo a) {
  switch (a) {
    case CollAlgo::Tree: return kTree;
    case CollAlgo::NVLS: return kNVLS;
    case CollAlgo::NVLSTree: return kNVLSTree;
    case CollAlgo::CollNet: return kCollNetDirect;
    case CollAlgo::PAT: return kPAT;
    default: return kRing;
  }
}

void check_shape(const Hardware& hw, Collective c, double bytes, const GroupShape& g) {
  if (!(bytes >= 0) || !std::isfinite(bytes))
    throw InputError(to_string(c) + ": message size must be a finite number of bytes ≥ 0, got " + fmt_num(bytes));
  const auto& nd = hw.node;
  if (g.size < 1 || g.per_node < 1 || g.nodes < 1 || g.per_node * g.nodes != g.size || g.per_node > nd.gpus_per_node ||
      g.concurrent_per_node < 1 || g.concurrent_per_node > nd.gpus_per_node)
    throw InputError(to_string(c) + ": group shape size " + std::to_string(g.size) + " = per_node " +
                     std::to_string(g.per_node) + " × nodes " + std::to_string(g.nodes) + ", concurrent_per_node " +
                     std::to_string(g.concurrent_per_node) + " is not valid on " + std::to_string(nd.gpus_per_node) +
                     "-GPU nodes (need size = per_node × nodes, 1 ≤ per_node, concurrent_per_node ≤ gpus_per_node)");
  if (!(g.nic_fraction > 0 && g.nic_fraction <= 1))
    throw InputError(to_string(c) + ": nic_fraction must be in (0, 1], got " + fmt_num(g.nic_fraction));
  if (g.nodes > 1 && !nd.scale_out())
    throw InputError(to_string(c) + ": the group spans " + std::to_string(g.nodes) + " nodes but hardware '" + hw.name +
                     "' has no scale-out (NIC) tier");
}

CollectiveCost from(const Result& r, CollAlgo a, CollProtocol p, int channels) {
  CollectiveCost cc;
  cc.time_s = r.time_s;
  cc.algo = a;
  cc.protocol = p;
  cc.channels = channels;
  cc.latency_s = r.latency_s;
  cc.nic_bytes = r.nic_bytes;
  cc.nic_busy_s = r.nic_rate > 0 ? std::min(r.time_s, r.nic_bytes / r.nic_rate) : 0;
  return cc;
}

}  // namespace

CollectiveCost collective_time(const Hardware& hw, Collective c, double bytes, const GroupShape& g, CollAlgo algo) {
  check_shape(hw, c, bytes, g);
  if (g.size == 1) {
    CollectiveCost z;
    z.algo = algo == CollAlgo::Auto ? CollAlgo::Ring : algo;
    return z;
  }
  const Comm comm = make_comm(hw, g);
  const Links l = links_of(hw, g);

  if (c == Collective::AllToAll || c == Collective::SendRecv) {
    // LL while each peer's message fits NCCL_P2P_LL_THRESHOLD, Simple above; Simple whenever it is already faster.
    const double per_peer = c == Collective::AllToAll ? bytes / g.size : bytes;
    Proto p = per_peer <= kP2pLLThreshold && (comm.protocols & kProtoLL) ? kLL : kSimple;
    Result r = run_p2p(comm, l, c, bytes, p);
    if (p == kLL) {
      const Result rs = run_p2p(comm, l, c, bytes, kSimple);
      if (rs.time_s < r.time_s) r = rs, p = kSimple;
    }
    return from(r, CollAlgo::Direct, to_proto(p), std::max(1, comm.channels));
  }

  if (algo == CollAlgo::Hierarchical && g.nodes > 1 && g.per_node > 1 && c != Collective::Broadcast) {
    const GroupShape intra{g.per_node, g.per_node, 1, g.concurrent_per_node, g.nic_fraction};
    const GroupShape inter{g.nodes, 1, g.nodes, std::max(g.concurrent_per_node, g.per_node), g.nic_fraction};
    const double shard = bytes / g.per_node;
    CollectiveCost h;
    std::vector<CollectiveCost> parts;
    if (c == Collective::AllReduce) {
      parts = {collective_time(hw, Collective::ReduceScatter, bytes, intra),
               collective_time(hw, Collective::AllReduce, shard, inter),
               collective_time(hw, Collective::AllGather, bytes, intra)};
    } else {
      parts = {collective_time(hw, c, bytes, intra),
               collective_time(hw, c, c == Collective::AllGather ? shard * g.nodes : shard, inter)};
    }
    for (const auto& x : parts) {
      h.time_s += x.time_s, h.latency_s += x.latency_s, h.nic_bytes += x.nic_bytes, h.nic_busy_s += x.nic_busy_s;
    }
    h.algo = CollAlgo::Hierarchical;
    h.protocol = CollProtocol::Simple;
    h.channels = comm.channels;
    return h;
  }

  const Func f = to_func(c);
  auto cost_of = [&](Algo a, Proto p) {
    const Result r = run_nccl(hw, comm, l, c, a, p, channels_for(comm, a, p, bytes),
                              channels_continuous(comm, a, p, bytes), bytes);
    return from(r, to_algo(a), to_proto(p), channels_for(comm, a, p, bytes));
  };

  // NCCL's choice at this size, and — so that a larger message never costs less — every algorithm/protocol NCCL
  // picks for larger messages: NCCL ranks options by its own estimate and can pick one just below a switch point that
  // is slower than the one it switches to there; parsim takes the cheaper. A forced algorithm runs with the
  // protocols NCCL would give it (the same envelope over them); one the collective cannot use falls back to Auto.
  const Table table = tuning_table(comm, f);
  const bool forced = algo != CollAlgo::Auto && algo != CollAlgo::Direct && algo != CollAlgo::Hierarchical;
  Selector sel(comm, table, f, forced ? static_cast<int>(to_nccl(algo)) : -1);
  if (forced && sel.argmin(bytes) < 0) sel = Selector(comm, table, f);
  bool later[kNumAlgos][kNumProtos] = {};
  sel.later_choices(bytes, later);
  CollectiveCost best;
  best.time_s = std::numeric_limits<double>::infinity();
  for (int ai = 0; ai < kNumAlgos; ++ai)
    for (int pi = 0; pi < kNumProtos; ++pi) {
      if (!later[ai][pi]) continue;
      const CollectiveCost cc = cost_of(static_cast<Algo>(ai), static_cast<Proto>(pi));
      if (cc.time_s < best.time_s) best = cc;
    }
  if (!std::isfinite(best.time_s)) best = cost_of(kRing, kSimple);  // nothing enabled fits: NCCL's fallback
  return best;
}

double collective_nic_bytes(const Hardware& hw, Collective c, double bytes, const GroupShape& g) {
  return collective_time(hw, c, bytes, g).nic_bytes;
}

}  // namespace parsim
