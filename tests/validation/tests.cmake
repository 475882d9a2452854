# validation: the published measured runs of tests/data/validation/ (accuracy issue #6).
# test_validation (label `validation`) simulates every row and asserts the accuracy bound; test_validation_reader
# (label `unit`) checks the CSV / flag reader; parsim_accuracy is a calibration tool, not a test.
parsim_test(test_validation LABELS validation LIBS parsim_step
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_validation.cpp)
parsim_test(test_validation_reader LABELS unit LIBS parsim_step
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_validation_reader.cpp)

add_executable(parsim_accuracy ${CMAKE_CURRENT_LIST_DIR}/accuracy_report.cpp)
target_link_libraries(parsim_accuracy PRIVATE parsim_step parsim_warnings)
target_compile_definitions(parsim_accuracy PRIVATE PARSIM_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data")
# Leave-one-source-out cross-validation of hardware/calibration.json (≈ 1.5 CPU-minutes).
parsim_test(test_cross_validation LABELS validation LIBS parsim_step
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cross_validation.cpp)
