# models/: presets and file loading, parameter counts, FLOPs and per-rank shapes, activation memory.
parsim_test(test_models LABELS unit contract LIBS parsim_models
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_model_io.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_params.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_flops.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_activations.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_families.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_moe.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_hybrid.cpp)
