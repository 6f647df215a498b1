# CUDA is optional. DLBENCH_CUDA=AUTO turns it on when the toolkit is found; OFF builds a clean
# CPU-only dlbench with every GPU path compiled out; ON fails when the toolkit is missing.
set(DLBENCH_CUDA AUTO CACHE STRING "Build the CUDA backend: AUTO, ON or OFF")
set_property(CACHE DLBENCH_CUDA PROPERTY STRINGS AUTO ON OFF)

set(DLBENCH_HAVE_CUDA OFF)
if(NOT DLBENCH_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    if(NOT CMAKE_CUDA_COMPILER AND CUDAToolkit_NVCC_EXECUTABLE)
      set(CMAKE_CUDA_COMPILER "${CUDAToolkit_NVCC_EXECUTABLE}")
    endif()
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    # CMake before 3.26 does not know that nvcc 12+ takes -std=c++20 (CUDA_STANDARD 20 then
    # fails at generate time); tell it, as newer CMake does itself.
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    # cuDNN and NCCL ship with the toolkit here and as system libraries elsewhere.
    find_path(DLBENCH_CUDNN_INCLUDE cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(DLBENCH_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
    find_path(DLBENCH_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(DLBENCH_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
    foreach(v DLBENCH_CUDNN_INCLUDE DLBENCH_CUDNN_LIBRARY DLBENCH_NCCL_INCLUDE DLBENCH_NCCL_LIBRARY)
      if(NOT ${v})
        message(FATAL_ERROR "CUDA toolkit found but ${v} is missing: install cuDNN 9 and NCCL, "
                            "or configure with -DDLBENCH_CUDA=OFF")
      endif()
    endforeach()
    add_library(dlbench_cudnn INTERFACE)
    target_include_directories(dlbench_cudnn INTERFACE ${DLBENCH_CUDNN_INCLUDE})
    target_link_libraries(dlbench_cudnn INTERFACE ${DLBENCH_CUDNN_LIBRARY})
    add_library(dlbench_nccl INTERFACE)
    target_include_directories(dlbench_nccl INTERFACE ${DLBENCH_NCCL_INCLUDE})
    target_link_libraries(dlbench_nccl INTERFACE ${DLBENCH_NCCL_LIBRARY})
    set(DLBENCH_HAVE_CUDA ON)
  elseif(DLBENCH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "DLBENCH_CUDA=ON but no CUDA toolkit was found; set CUDAToolkit_ROOT "
                        "or configure with -DDLBENCH_CUDA=AUTO")
  endif()
endif()
message(STATUS "dlbench: CUDA backend ${DLBENCH_HAVE_CUDA} (DLBENCH_CUDA=${DLBENCH_CUDA}, "
               "architectures ${CMAKE_CUDA_ARCHITECTURES})")
