# Run by CMake (-P) after a test executable is built: lists its GoogleTest
# tests and writes the CTest file (${out}) that runs each suite in one
# process, named by the suite. Most tests take milliseconds and a process
# start about 70 ms (the libraries it loads): one process per test spent a
# quarter of the test command's time starting them. The tests that match
# ${slow} (a gtest filter) run one per process instead, labelled slow too.
#
# Arguments: exe (the executable), out, labels (comma-separated), slow (may be empty).
string(REPLACE "," ";" labels "${labels}")

# The suites of the tests matching `filter`, in order, in `suites`; the tests' full names in `tests`.
function(list_tests filter)
  execute_process(COMMAND "${exe}" --gtest_list_tests "--gtest_filter=${filter}"
                  OUTPUT_VARIABLE listed ERROR_VARIABLE listed RESULT_VARIABLE rc TIMEOUT 60)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${exe} --gtest_list_tests failed (${rc}):\n${listed}")
  endif()
  # Value comments ("  # GetParam() = ...") and list separators out; then a line each.
  string(REGEX REPLACE "  #[^\n]*" "" listed "${listed}")
  string(REPLACE ";" "" listed "${listed}")
  string(REPLACE "\n" ";" lines "${listed}")
  set(found_suites "")
  set(found_tests "")
  set(suite "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^([^ ]+)\\.$")
      set(suite "${CMAKE_MATCH_1}")
      list(APPEND found_suites "${suite}")
    elseif(line MATCHES "^  ([^ ]+)$" AND suite)
      list(APPEND found_tests "${suite}.${CMAKE_MATCH_1}")
    endif()
  endforeach()
  set(suites "${found_suites}" PARENT_SCOPE)
  set(tests "${found_tests}" PARENT_SCOPE)
endfunction()

set(text "")
set(names "")
macro(emit name filter test_labels)
  string(APPEND text "add_test([==[${name}]==] [==[${exe}]==] [==[--gtest_filter=${filter}]==])\n"
         "set_tests_properties([==[${name}]==] PROPERTIES LABELS [==[${test_labels}]==] SKIP_RETURN_CODE 77)\n")
  list(APPEND names "${name}")
endmacro()

if(slow)
  list_tests("-${slow}")
  foreach(suite IN LISTS suites)
    emit("${suite}" "${suite}.*-${slow}" "${labels}")
  endforeach()
  list_tests("${slow}")
  foreach(test IN LISTS tests)
    emit("${test}" "${test}" "${labels};slow")
  endforeach()
else()
  list_tests("*")
  foreach(suite IN LISTS suites)
    emit("${suite}" "${suite}.*" "${labels}")
  endforeach()
endif()

string(APPEND text "list(APPEND shallows_discovered_tests")
foreach(name IN LISTS names)
  string(APPEND text " [==[${name}]==]")
endforeach()
string(APPEND text ")\n")
file(WRITE "${out}" "${text}")
