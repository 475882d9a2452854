// fuzz_kineto: the streaming Kineto (PyTorch profiler) trace reader, plain or gzip, through the file path `parsim
// profile` uses, then the GPU-timeline analysis with and without --steps / --all-kernels and the JSON and table
// output. Accepted traces must give finite, non-negative times (a negative kernel duration must not make compute
// time negative) and JSON that reads back.
#include "fuzz_common.hpp"
#include "sim/measure/kineto.hpp"
#include "sim/measure/profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace parsim;
  const std::string path = fuzz::scratch_file("trace.json", fuzz::bytes(data, size));
  fuzz::guarded([&] {
    const kineto::TraceData t = kineto::read_trace(path);
    for (const bool all : {false, true})
      for (const bool steps : {false, true}) {
        ProfileOptions opt;
        opt.all_kernels = all;
        opt.steps = steps;
        ProfileReport rep;
        rep.ranks.push_back(profile_rank(t, opt, 0));
        const RankProfile& r = rep.ranks.back();
        for (double v : {r.total_s, r.compute_s, r.comm_s, r.exposed_comm_s, r.memcpy_s, r.exposed_memcpy_s,
                         r.memset_s, r.busy_s, r.idle_s})
          PARSIM_FUZZ_CHECK(fuzz::finite_nonneg(v), std::to_string(v));
        PARSIM_FUZZ_CHECK(r.exposed_comm_s <= r.comm_s * (1 + 1e-9) + 1e-12, std::to_string(r.exposed_comm_s));
        rep.collectives = collective_stats(rep.ranks);
        fuzz::check_json(profile_json(rep), "profile_json");
        (void)profile_table(rep);
      }
  });
  return 0;
}
