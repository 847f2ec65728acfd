# The Python module (python/): pybind11 and the headers of one Python 3.
# AUTO: built where both are found. The module is for the interpreter named
# by SHALLOWS_PYTHON_EXECUTABLE (default: the system's /usr/bin/python3,
# whose Debian packages give numpy, xarray and netCDF4), not for whatever
# python3 comes first on PATH.
set(SHALLOWS_PYTHON "AUTO" CACHE STRING "Python module: AUTO (on where pybind11 and Python's headers are found), ON, OFF")
if(EXISTS /usr/bin/python3)
  set(shallows_default_python /usr/bin/python3)
else()
  set(shallows_default_python "")
endif()
set(SHALLOWS_PYTHON_EXECUTABLE "${shallows_default_python}" CACHE FILEPATH "The python3 the module is built for")

set(SHALLOWS_HAVE_PYTHON OFF)
if(NOT SHALLOWS_PYTHON STREQUAL "OFF")
  if(SHALLOWS_PYTHON_EXECUTABLE)
    set(Python_EXECUTABLE "${SHALLOWS_PYTHON_EXECUTABLE}")
  endif()
  find_package(Python 3.8 QUIET COMPONENTS Interpreter Development.Module)
  if(Python_FOUND)
    find_package(pybind11 2.6 CONFIG QUIET)
  endif()
  if(Python_FOUND AND pybind11_FOUND)
    set(SHALLOWS_HAVE_PYTHON ON)
  elseif(SHALLOWS_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "SHALLOWS_PYTHON=ON but pybind11 or Python's headers were not found "
                        "(Debian: apt-get install pybind11-dev python3-dev)")
  else()
    message(STATUS "pybind11 or Python's headers not found: no Python module")
  endif()
endif()
set(SHALLOWS_HAVE_PYTHON ${SHALLOWS_HAVE_PYTHON} CACHE INTERNAL "The Python module is built")
