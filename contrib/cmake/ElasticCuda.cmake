# The CUDA toolkit and NCCL for the torch-free GPU libraries (agent/comm's NCCL communicator and
# slot fold, agent/multiplex's CUDA executor). Independent of ELASTIC_CUDA, which needs a CUDA
# LibTorch: CI has the toolkit but only a CPU LibTorch and no GPU, so these libraries must
# compile there (their tests skip without a device).
#
# Sets ELASTIC_HAVE_CUDA_TOOLKIT (nvcc and cudart found, CUDA enabled as a language) and
# ELASTIC_HAVE_NCCL (also nccl.h and libnccl, as the imported target elastic::nccl).

# Where to look for the toolkit: CUDA_HOME (what CI and the lent GPU machines set), unless
# CUDAToolkit_ROOT was given.
function(_elastic_cuda_hint_root)
  if(NOT CUDAToolkit_ROOT AND NOT DEFINED ENV{CUDAToolkit_ROOT} AND DEFINED ENV{CUDA_HOME})
    set(CUDAToolkit_ROOT "$ENV{CUDA_HOME}" CACHE PATH "CUDA toolkit prefix (from CUDA_HOME)")
  endif()
endfunction()

# nccl.h and libnccl: NCCL ships beside the toolkit in CUDA images (CUDA_HOME/include, lib or
# lib64), in /usr on distributions and in PyTorch's nvidia-nccl wheel (libnccl.so.2 only);
# NCCL_ROOT, NCCL_INCLUDE_DIR or NCCL_LIBRARY override.
function(_elastic_find_nccl)
  set(hints ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_ROOT} $ENV{CUDA_HOME}
            ${CUDAToolkit_LIBRARY_ROOT})
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${hints} ${CUDAToolkit_INCLUDE_DIRS}
            PATH_SUFFIXES include)
  find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${hints} ${CUDAToolkit_LIBRARY_DIR}
               PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu)
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY AND NOT TARGET elastic::nccl)
    add_library(elastic::nccl UNKNOWN IMPORTED GLOBAL)
    set_target_properties(elastic::nccl PROPERTIES IMPORTED_LOCATION "${NCCL_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
  endif()
endfunction()

# REQUIRES: ELASTIC_CUDA_TOOLKIT is AUTO, ON or OFF. A macro: enable_language must run at the
# top level's scope, and the results are variables of that scope.
macro(elastic_find_cuda_toolkit)
  set(ELASTIC_HAVE_CUDA_TOOLKIT OFF)
  set(ELASTIC_HAVE_NCCL OFF)
  set(_elastic_cuda_why "")
  if(ELASTIC_CUDA_TOOLKIT STREQUAL "OFF")
    set(_elastic_cuda_why "ELASTIC_CUDA_TOOLKIT=OFF")
  elseif(ELASTIC_SANITIZE AND ELASTIC_CUDA_TOOLKIT STREQUAL "AUTO")
    # nvcc does not take the sanitizer flags every target gets (add_compile_options above).
    set(_elastic_cuda_why "ELASTIC_SANITIZE builds no CUDA code")
  else()
    _elastic_cuda_hint_root()
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND AND CUDAToolkit_NVCC_EXECUTABLE)
      # check_language tries nvcc with our host compiler in a scratch project first, so AUTO
      # turns a toolkit that cannot compile here into a message, not a failed configure.
      if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
        set(ENV{CUDACXX} "${CUDAToolkit_NVCC_EXECUTABLE}")
      endif()
      if(NOT CMAKE_CUDA_HOST_COMPILER)
        set(CMAKE_CUDA_HOST_COMPILER "${CMAKE_CXX_COMPILER}")
      endif()
      # Ampere and Hopper (the lent H100/H200 are 90), unless the user chose.
      if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
        set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures to compile for")
      endif()
      include(CheckLanguage)
      check_language(CUDA)
    endif()
    if(CUDAToolkit_FOUND AND CMAKE_CUDA_COMPILER)
      enable_language(CUDA)
      set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 knows no CUDA20 dialect for nvcc
      set(CMAKE_CUDA_STANDARD_REQUIRED ON)
      set(ELASTIC_HAVE_CUDA_TOOLKIT ON)
      _elastic_find_nccl()
      if(TARGET elastic::nccl)
        set(ELASTIC_HAVE_NCCL ON)
      else()
        set(_elastic_cuda_why "nccl.h or libnccl not found (set NCCL_ROOT)")
      endif()
    elseif(CUDAToolkit_FOUND)
      set(_elastic_cuda_why "nvcc (${CUDAToolkit_NVCC_EXECUTABLE}) cannot compile here")
    else()
      set(_elastic_cuda_why "no CUDA toolkit (set CUDA_HOME or CUDAToolkit_ROOT)")
    endif()
  endif()
  if(ELASTIC_CUDA_TOOLKIT STREQUAL "ON" AND NOT ELASTIC_HAVE_NCCL)
    message(FATAL_ERROR "ELASTIC_CUDA_TOOLKIT=ON but ${_elastic_cuda_why}")
  elseif(ELASTIC_HAVE_NCCL)
    message(STATUS "CUDA toolkit ${CUDAToolkit_VERSION} and NCCL (${NCCL_LIBRARY}): building "
                   "the NCCL communicator, slot fold and CUDA executor for "
                   "${CMAKE_CUDA_ARCHITECTURES}")
  elseif(ELASTIC_HAVE_CUDA_TOOLKIT)
    message(STATUS "CUDA toolkit ${CUDAToolkit_VERSION} without NCCL (${_elastic_cuda_why}): "
                   "building the CUDA executor and slot fold only")
  else()
    message(STATUS "No CUDA code built: ${_elastic_cuda_why}")
  endif()
endmacro()

# Our warning flags on a target with CUDA sources: g++'s for the C++ units, nvcc's (and its host
# compiler's) for the .cu units, which reject g++'s flags given directly.
function(elastic_cuda_target_defaults target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra $<$<BOOL:${ELASTIC_WERROR}>:-Werror>>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra
                               $<$<BOOL:${ELASTIC_WERROR}>:-Werror=all-warnings>>)
endfunction()
