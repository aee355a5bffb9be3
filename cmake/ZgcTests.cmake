# zgc_add_unit_test(NAME SOURCES src... [LIBS lib...])
# Builds one Criterion test binary and registers it with ctest.
find_library(CRITERION_LIB criterion)
function(zgc_add_unit_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} ${CRITERION_LIB})
  target_compile_definitions(${name} PRIVATE _GNU_SOURCE)
  # Criterion forks one process per test; keep it to one job per core.
  # A test that hangs is stopped after 120 s and reported by its name
  # (the binary's own time limit, ctest's TIMEOUT, would name none).
  add_test(NAME ${name} COMMAND ${name} --jobs 2 --timeout 120)
  set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 300
    ENVIRONMENT "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/lsan.supp")
endfunction()

# zgc_test_costs(NAME:SECONDS ...)
# The longest tests first: ctest -j starts tests in descending COST (when
# it has no timings of its own, as on a fresh checkout), so that no long
# test is left running alone at the end.  SECONDS: about the test's time
# under the sanitizers.  Tests this build does not define are skipped.
function(zgc_test_costs)
  foreach(pair ${ARGN})
    string(REPLACE ":" ";" pair "${pair}")
    list(GET pair 0 t)
    list(GET pair 1 cost)
    if(TEST ${t})
      set_tests_properties(${t} PROPERTIES COST ${cost})
    endif()
  endforeach()
endfunction()
