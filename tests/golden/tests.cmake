# Golden JSON outputs (tests/data/golden/README.md; regenerate with PARSIM_REGENERATE_GOLDEN=1 build/tests/test_golden).
parsim_test(test_golden LABELS golden LIBS parsim_api
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_golden.cpp)
