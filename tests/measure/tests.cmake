# tests/measure — profile (Kineto traces), calibrate (nccl-tests, GEMM tables), validate.
parsim_test(test_measure LABELS unit golden validation LIBS parsim_measure
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_profile_unit.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_profile_refs.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_robustness.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_calibrate.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_validate.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_hardening.cpp)
# calibrate --out needs the hardware library's presets, file I/O and collective model.
parsim_test(test_measure_hw LABELS unit LIBS parsim_measure parsim_hardware
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_calibrate_hw.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_calibrate_gemm.cpp)
# Through the binary: exit codes, one-line errors, JSON keys.
parsim_test(test_measure_cli LABELS cli
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cli.cpp)
