parsim_test(test_sweep LABELS unit contract LIBS parsim_present
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_sweep.cpp)
parsim_test(test_sweep_cli LABELS cli LIBS nlohmann_json::nlohmann_json
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_sweep_cli.cpp)
add_dependencies(test_sweep_cli parsim)
