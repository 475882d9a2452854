parsim_test(test_cli LABELS cli LIBS nlohmann_json::nlohmann_json
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cli.cpp)
add_dependencies(test_cli parsim)
