// parsim sim/step/costs/offload.cpp — activation offloading to host memory (--cpu-offloading-num-layers).
//
// Megatron-Core's --cpu-offloading wraps each transformer layer of a TransformerBlock in Transformer Engine's
// CPU-offload context (megatron/core/transformer/transformer_block.py: get_cpu_offload_context(cpu_offloading,
// cpu_offloading_num_layers, num_layers, …) @d98e8a64dd). TE's default scheduling, as its guide states it
// (docs/features/other_optimizations/cpu_offloading/cpu_offloading.rst @d0067d0da):
//   - the first N layers' activations are offloaded, starting as soon as they are saved, on a copy stream;
//   - at most L − N layers' activation sets are on the GPU at any time — "both compute and reload may be stalled to
//     enforce this limit";
//   - a reload must complete before the layer's backward needs it.
// Played for one micro-batch of the non-pipelined schedule (the only one Megatron-Core allows with offloading), with
// S = L − N slots and one copy engine each way at the link's rate B (node.host_link_gbytes_per_s):
//   forward:  the embedding, then layers 0 … L−1, then the head. Layer i's copy to the host (A_i / B) starts when the
//             layer ends and after copy i − 1 (one stream); layer j ≥ S starts only once copy j − S is done (its
//             set left the GPU), so that at most S sets are there.
//   backward: the head, then layers L−1 … 0, then the embedding. At the forward's end layers N … L−1 fill the S slots;
//             each backward frees one, so the reload of the k-th offloaded layer from the top (layer N − 1 − k) may
//             start once k + 1 backwards are done, after reload k − 1 (one stream); layer i < N starts only once its
//             reload is done.
// The waits are the gaps the copies open on the compute stream. Copy start at the layer's end is the conservative end
// of "as soon as tensors are saved"; HBM traffic of the copies and the layers' host issue are not charged here.
#include "sim/step/costs.hpp"

#include <algorithm>

namespace parsim {

StepCosts::Offload offload_schedule(const Scenario& sc, const StepCosts& k, const std::vector<double>& layer_bytes) {
  StepCosts::Offload out;
  const int L = sc.model.layers, N = sc.train.cpu_offload_layers;
  if (N <= 0 || N >= L || static_cast<int>(layer_bytes.size()) != L) return out;
  const double B = sc.hw.node.host_link_gbytes_per_s * 1e9;  // bytes/s each way
  const int S = L - N;
  out.layers = N;
  for (int i = 0; i < N; ++i) out.bytes += layer_bytes[static_cast<std::size_t>(i)];
  std::vector<double> copy_end(static_cast<std::size_t>(N), 0.0);
  // Forward.
  double t = k.embed.fwd.duration_s(), copy_free = 0, wait = 0;
  for (int j = 0; j < L; ++j) {
    double start = t;
    if (j >= S) start = std::max(start, copy_end[static_cast<std::size_t>(j - S)]);
    wait += start - t;
    t = start + k.kind_of(j).pass.fwd.duration_s();
    if (j < N) {
      copy_free = std::max(copy_free, t) + layer_bytes[static_cast<std::size_t>(j)] / B;
      copy_end[static_cast<std::size_t>(j)] = copy_free;
    }
  }
  out.fwd_wait_s = wait;
  // Backward: layer L−1−d is the d-th backward (d = 0 first). The offloaded layers come back in the order they are
  // needed, one per offloaded layer reached: the reload of layer N − 1 − r (the r-th, r = d − S < d) starts once
  // backward r has freed its slot and the previous reload is done.
  std::vector<double> bwd_end(static_cast<std::size_t>(L), 0.0);
  t = k.head.bwd.duration_s();
  wait = 0;
  double reload_free = 0;
  for (int d = 0; d < L; ++d) {
    const int layer = L - 1 - d;
    double start = t;
    if (layer < N) {
      const int r = N - 1 - layer;
      reload_free = std::max(reload_free, bwd_end[static_cast<std::size_t>(r)]) +
                    layer_bytes[static_cast<std::size_t>(layer)] / B;
      start = std::max(start, reload_free);
    }
    wait += start - t;
    t = start + k.kind_of(layer).pass.bwd.duration_s();
    bwd_end[static_cast<std::size_t>(d)] = t;
  }
  out.bwd_wait_s = wait;
  return out;
}

}  // namespace parsim
