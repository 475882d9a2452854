parsim_test(test_plans LABELS unit contract LIBS parsim_plans
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_grammar.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_validate.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_layout.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_expert.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_scenario.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_sharding.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_schedule.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_space.cpp)
