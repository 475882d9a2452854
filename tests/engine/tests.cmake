parsim_test(test_engine LABELS unit contract LIBS parsim_engine
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_engine.cpp)
