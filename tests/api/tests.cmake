# sim/api: the JSON-in/JSON-out functions the Python module wraps, against the typed paths the CLI uses.
parsim_test(test_api LABELS unit contract LIBS parsim_api
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_api.cpp)
