# The test registry: every suite of `make test` is one pbus_add_suite() line
# (in tests/CMakeLists.txt and beside the code it tests), so CTest knows every
# suite with its labels, time limit and environment, and tests/run-all only
# runs CTest and counts what the suites print.
#
# A suite is a program that prints `PASS: name` / `FAIL: name: reason` lines
# and exits non-zero if one failed (tests/include/pbus-check.h for C).
#
# The build trees (CMakePresets.json): dev, the plain build, holds most
# suites; asan (PBUS_SANITIZE=address,undefined) and tsan (thread) hold the
# suites that are worth running under a sanitizer. PBUS_TEST_TREE names the
# tree being configured, PBUS_TEST_PREFIX is what its suites' names start
# with ("" in dev, "asan/" or "tsan/"), for commands that name their results.
if(NOT PBUS_SANITIZE)
  set(PBUS_TEST_TREE dev)
elseif(PBUS_SANITIZE MATCHES "thread")
  set(PBUS_TEST_TREE tsan)
else()
  set(PBUS_TEST_TREE asan)
endif()
if(PBUS_TEST_TREE STREQUAL "dev")
  set(PBUS_TEST_PREFIX "")
else()
  set(PBUS_TEST_PREFIX "${PBUS_TEST_TREE}/")
endif()
# The folder that holds the trees (build/), for suites that use several.
get_filename_component(PBUS_BUILD_ROOT ${PROJECT_BINARY_DIR} DIRECTORY)
# The Python that runs the script suites (the one that runs tests/run-all).
find_program(PBUS_TEST_PYTHON3 NAMES python3 REQUIRED)

# The C tests' one assertion header, tests/include/pbus-check.h.
add_library(pbus-check INTERFACE)
target_include_directories(pbus-check INTERFACE ${PROJECT_SOURCE_DIR}/tests/include)

# What a sanitizer run needs: the options tests/run-all always gave them,
# and shorter stress runs (PBUS_STRESS_SCALE, tests/stress/CMakeLists.txt).
set(PBUS_TEST_ENVIRONMENT_asan
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  PBUS_STRESS_SCALE=0.3)
set(PBUS_TEST_ENVIRONMENT_tsan
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
  PBUS_STRESS_SCALE=0.3)

# pbus_add_suite(NAME name LABELS label... TIMEOUT seconds [TREES tree...]
#                COMMAND command [arg...])
#
# Registers the suite NAME in the trees named by TREES (dev, asan, tsan;
# default dev), nowhere else. In a sanitizer tree the test is called
# <tree>/NAME, carries the tree's name as one more label, runs with the
# sanitizer's environment and gets at least 300 s. Every suite runs in the
# source tree's top folder, as the scripts expect. The label `full` marks
# suites that only the full run makes (tests/run-all runs them last, after
# the sanitizer trees, and leaves them out of --quick).
function(pbus_add_suite)
  cmake_parse_arguments(PARSE_ARGV 0 S "" "NAME;TIMEOUT" "LABELS;TREES;COMMAND")
  if(NOT S_NAME OR NOT S_LABELS OR NOT S_TIMEOUT OR NOT S_COMMAND OR S_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "pbus_add_suite(${ARGV}): needs NAME, LABELS, TIMEOUT and COMMAND")
  endif()
  if(NOT S_TREES)
    set(S_TREES dev)
  endif()
  if(NOT PBUS_TEST_TREE IN_LIST S_TREES)
    return()
  endif()
  set(timeout ${S_TIMEOUT})
  set(labels ${S_LABELS})
  set(environment "")
  if(NOT PBUS_TEST_TREE STREQUAL "dev")
    list(APPEND labels ${PBUS_TEST_TREE})
    set(environment ${PBUS_TEST_ENVIRONMENT_${PBUS_TEST_TREE}})
    if(timeout LESS 300)
      set(timeout 300)
    endif()
  endif()
  set(name ${PBUS_TEST_PREFIX}${S_NAME})
  add_test(NAME ${name} COMMAND ${S_COMMAND} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT ${timeout})
  if(environment)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${environment}")
  endif()
endfunction()
