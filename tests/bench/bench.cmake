# parsim_bench: sweep throughput on fixed, realistic sweeps. A benchmark, not a test (timings do not belong in ctest):
#   cmake --build build --target parsim_bench && build/tests/parsim_bench [--threads N] [--only 70b|405b]
add_executable(parsim_bench ${CMAKE_CURRENT_LIST_DIR}/bench_sweep.cpp)
target_link_libraries(parsim_bench PRIVATE parsim_present parsim_warnings)
