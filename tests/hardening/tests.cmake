# tests/hardening — issue 12: the strict JSON reader, checked conversions, file reading and writing (unit), and the
# catalogue of invalid-input classes through the binary (cli).
parsim_test(test_hardening_core LABELS unit LIBS parsim_core
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_core.cpp)
parsim_test(test_hardening_cli LABELS cli LIBS nlohmann_json::nlohmann_json ZLIB::ZLIB
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_catalogue.cpp)
add_dependencies(test_hardening_cli parsim)
parsim_test(test_hardening_scale LABELS unit LIBS parsim_present nlohmann_json::nlohmann_json
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_scale.cpp)
