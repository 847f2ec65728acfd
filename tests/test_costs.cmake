# Read by CTest after the GoogleTest tests are discovered (after_discovery.cmake
# of tests/CMakeLists.txt): about the seconds that the tests that take
# seconds run on two idle cores, each with a regular expression matching
# their names. CTest starts the costliest first; without costs, on a fresh
# build (no timings from an earlier run), it starts them in file order, and
# one of them started last can leave one core running it alone.
set(shallows_test_costs
  "7 ^S003T3[.](ThirdOrder|SinglePrecision)200$"
  "4 ^Restart[.]Killed(Mesh|GridRunWithForcing|GridRoe3)"
  "4 ^BoundarySeries[.]LevelSideFollowsItsStageHydrograph$"
  "2 ^PrecisionsAndSchemes/ScalarRun[.]AdvectedProfileConvergesAtFirstOrder/.*_roe3"
  "2 ^Order3Family[.]MovingVortexIsThirdOrder$"
  "2 ^Restart[.]KilledGridRoe1"
  "2 ^Q/SeedLevels[.]S000T[12].*/Q2"
  "2 ^Schemes/ForcingRun[.]GreenAmptUnderPondingFollowsTheAnalyticSolution/roe3"
  "2 ^SeedCases[.]S003T1LakesFromRastersStayAtRest$"
  "2 ^EnsembleRuns[.](GridMembers|Resumed)"
  "1 ^WellBalancedRoe3[.](LakeAtRest|MassConserved|InactiveCells)"
  "1 ^DamBreak[.](Ritter|Stoker)ThirdOrder$")
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
