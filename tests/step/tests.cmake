parsim_test(test_step LABELS unit contract LIBS parsim_present
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_step.cpp ${CMAKE_CURRENT_LIST_DIR}/test_trace.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_contracts.cpp ${CMAKE_CURRENT_LIST_DIR}/test_costs.cpp ${CMAKE_CURRENT_LIST_DIR}/test_host.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_moe.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_schedules.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_fidelity.cpp ${CMAKE_CURRENT_LIST_DIR}/test_deadlock.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_network.cpp ${CMAKE_CURRENT_LIST_DIR}/test_shape_cache.cpp)
