# sim/present: the SVG pictures (well-formed, and drawing what was simulated).
parsim_test(test_svg LABELS unit LIBS parsim_present parsim_plans
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_svg.cpp)
target_include_directories(test_svg PRIVATE ${PROJECT_SOURCE_DIR})
parsim_test(test_advice LABELS unit LIBS parsim_present parsim_plans
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_advice.cpp)
