# hardware/: presets and the JSON schema, the compute model, the collective model (contract + measured tables).
parsim_test(test_hardware LABELS unit contract LIBS parsim_hardware
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_presets_io.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_compute_cost.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_collectives.cpp)
