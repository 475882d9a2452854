# parsim_bench: sweep throughput on fixed, realistic sweeps. A benchmark, not a test (timings do not belong in ctest):
#   cmake --build build --target parsim_bench && build/tests/parsim_bench [--threads N] [--only 70b|405b]
add_executable(parsim_bench ${CMAKE_CURRENT_LIST_DIR}/bench_sweep.cpp)
target_link_libraries(parsim_bench PRIVATE parsim_present parsim_warnings)
# parsim_bench_measure: calibrate on 3k-200k-row tables, profile of a synthetic Kineto trace (time, peak RSS).
#   cmake --build build --target parsim_bench_measure && build/tests/parsim_bench_measure [--trace-mb 1024]
add_executable(parsim_bench_measure ${CMAKE_CURRENT_LIST_DIR}/bench_measure.cpp)
target_link_libraries(parsim_bench_measure PRIVATE parsim_measure parsim_warnings)
