# Read by CTest after the GoogleTest suites are listed (after_discovery.cmake
# of tests/CMakeLists.txt): about the seconds that the suites that take
# seconds run on two idle cores, each with a regular expression matching
# their names. CTest starts the costliest first; without costs, on a fresh
# build (no timings from an earlier run), it starts them in file order, and
# one of them started last can leave one core running it alone.
set(shallows_test_costs
  "16 ^Restart$"
  "15 ^S003T3$"
  "13 ^All/Executors$"
  "9 ^(WellBalancedRoe3|Q/SeedLevels)$"
  "6 ^(PrecisionsAndSchemes/ScalarRun|Schemes/SegmentRun)$"
  "5 ^(Cases/Sweep|DamBreak|EnsembleRuns)$"
  "4 ^(BoundarySeries|Schemes/ForcingRun)$"
  "3 ^(StructureRuns|GridAndMesh/StructureRun|MeshLakeAtRest|WeirRuns)$")
foreach(test IN LISTS shallows_discovered_tests)
  foreach(entry IN LISTS shallows_test_costs)
    string(REGEX MATCH "^([0-9]+) (.*)$" matched "${entry}")
    set(cost ${CMAKE_MATCH_1})
    if(test MATCHES "${CMAKE_MATCH_2}")
      set_tests_properties("${test}" PROPERTIES COST ${cost})
      break()
    endif()
  endforeach()
endforeach()
