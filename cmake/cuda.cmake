# CUDA backend: on when nvcc is found (AUTO). Architectures: the GPU present
# at build time ("native"), else current ones (sm_80, sm_90, PTX for newer);
# override with -DCMAKE_CUDA_ARCHITECTURES=...
set(SHALLOWS_HAVE_CUDA OFF)
if(NOT SHALLOWS_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      execute_process(COMMAND nvidia-smi --query-gpu=compute_cap --format=csv,noheader
                      OUTPUT_VARIABLE _gpu_cc RESULT_VARIABLE _smi_rc ERROR_QUIET)
      if(_smi_rc EQUAL 0 AND _gpu_cc MATCHES "[0-9]")
        set(CMAKE_CUDA_ARCHITECTURES native)
      else()
        set(CMAKE_CUDA_ARCHITECTURES "80-real;90-real;90-virtual")
      endif()
    endif()
    enable_language(CUDA)
    # CMake < 3.26 knows no CUDA20 dialect for nvcc (and would take the
    # targets' CXX_STANDARD 20 for CUDA too): ask for 17 and make that flag
    # say c++20, which nvcc 12+ accepts.
    if(DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA_STANDARD 20)
    else()
      set(CMAKE_CUDA_STANDARD 17)
      set(CMAKE_CUDA17_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA17_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    # No contraction of a*b+c into FMA: the kernels then round exactly as the
    # CPU executor (x86-64 without FMA), so CPU and GPU runs agree bit for bit.
    # Measured cost: ~3% more floating-point instructions (bench/cuda-notes.md).
    option(SHALLOWS_CUDA_FMAD "Let nvcc contract a*b+c into FMA (GPU results then differ from the CPU in the last bits)" OFF)
    if(NOT SHALLOWS_CUDA_FMAD)
      string(APPEND CMAKE_CUDA_FLAGS " --fmad=false")
    endif()
    find_package(CUDAToolkit REQUIRED)
    set(SHALLOWS_HAVE_CUDA ON)
    message(STATUS "CUDA backend on, architectures: ${CMAKE_CUDA_ARCHITECTURES}")
  elseif(SHALLOWS_CUDA STREQUAL "ON")
    message(FATAL_ERROR "SHALLOWS_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
