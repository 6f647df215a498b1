# Registers the op harness (dlbench_ops) with CTest as one test per op and backend variant
# ("ops/test/conv_forward/cpu", "ops/grad/matmul/cuda"), each running its cases in one
# process with a gtest filter. One CTest entry per harness case would be ~3,500 processes at
# ~0.3 s of start-up each; grouped, the cases keep their own names and skips in the output.
#
# Run as a script after dlbench_ops links: cmake -DEXE=... -DOUT=... -P OpHarnessGroups.cmake.
# It lists the cases (--gtest_list_tests), groups them by suite (ops/<mode>/<op>) and variant
# (the name's middle: cpu, cuda, cuda/cudnn, cuda/gemm), and writes OUT with one add_test per
# group, labelled `ops` on the CPU and `gpu` otherwise. A gpu group reports itself skipped when
# its backend says there is no GPU (the variant's skip reason starts "no GPU").
cmake_minimum_required(VERSION 3.22)
execute_process(COMMAND "${EXE}" --gtest_list_tests OUTPUT_VARIABLE listing RESULT_VARIABLE rc
                TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dlbench_ops --gtest_list_tests failed (${rc})")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(groups "")
set(suite "")
foreach(line IN LISTS lines)
  if(line MATCHES "^ops/[^ ]+\\.$")
    string(REGEX REPLACE "\\.$" "" suite "${line}")
  elseif(line MATCHES "^  ([^ ]+)" AND suite)
    # <params>/<variant>/<precision>: the variant is everything between the first and last '/'.
    string(REGEX MATCH "^[^/]+/(.+)/([^/]+)$" _ "${CMAKE_MATCH_1}")
    set(variant "${CMAKE_MATCH_1}")
    set(precision "${CMAKE_MATCH_2}")
    set(key "${suite}|${variant}")
    string(MAKE_C_IDENTIFIER "${key}" id)
    if(NOT key IN_LIST groups)
      list(APPEND groups "${key}")
      set(precisions_${id} "")
    endif()
    if(NOT precision IN_LIST precisions_${id})
      list(APPEND precisions_${id} "${precision}")
    endif()
  endif()
endforeach()

set(text "# Written by cmake/OpHarnessGroups.cmake after dlbench_ops links.\n")
foreach(key IN LISTS groups)
  string(REPLACE "|" ";" parts "${key}")
  list(GET parts 0 suite)
  list(GET parts 1 variant)
  string(MAKE_C_IDENTIFIER "${key}" id)
  # One pattern per precision, so "cuda" does not also pick up "cuda/cudnn".
  set(filter "")
  foreach(p IN LISTS precisions_${id})
    list(APPEND filter "${suite}.*/${variant}/${p}")
  endforeach()
  list(JOIN filter ":" filter)
  set(name "${suite}/${variant}")
  string(APPEND text "add_test([=[${name}]=] [=[${EXE}]=] [=[--gtest_filter=${filter}]=])\n")
  if(variant STREQUAL "cpu")
    # Two OpenMP threads whatever the test run sets (make test gives other tests one): the CPU
    # kernels' threaded paths are what the harness checks against the reference.
    string(APPEND text "set_tests_properties([=[${name}]=] PROPERTIES LABELS ops "
                       "ENVIRONMENT OMP_NUM_THREADS=2)\n")
  else()
    string(APPEND text "set_tests_properties([=[${name}]=] PROPERTIES LABELS gpu "
                       "SKIP_REGULAR_EXPRESSION [=[no GPU \\(]=])\n")
  endif()
endforeach()
file(WRITE "${OUT}" "${text}")
