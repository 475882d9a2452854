# Benchmarks are separate targets that print figures; they are not ctest tests (speed is never asserted in a test).
add_executable(parsim_bench_engine ${CMAKE_CURRENT_LIST_DIR}/bench_engine.cpp)
target_link_libraries(parsim_bench_engine PRIVATE parsim_step parsim_warnings)
