# CMake helpers shared by every directory: warning flags, hardening, test registration.

# Warnings are errors on our own targets only (never on LibTorch's headers: they are SYSTEM).
function(elastic_target_defaults target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_options(${target} PRIVATE -Wall -Wextra $<$<BOOL:${ELASTIC_WERROR}>:-Werror>)
endfunction()

# Flags for code that runs as root inside Slurm (the SPANK plugin) and for the daemon.
function(elastic_target_hardening target)
  target_compile_options(${target} PRIVATE -fstack-protector-strong -fstack-clash-protection
                         -fcf-protection $<$<NOT:$<CONFIG:Debug>>:-D_FORTIFY_SOURCE=2>)
  target_link_options(${target} PRIVATE -Wl,-z,relro -Wl,-z,now -Wl,-z,noexecstack)
endfunction()

# Slurm loads plugins from the directory libslurm was built with. Debian uses
# <libdir>/slurm-wlm, upstream <libdir>/slurm; ELASTIC_SLURM_PLUGIN_DIR overrides both.
function(elastic_find_slurm_plugin_dir)
  if(ELASTIC_SLURM_PLUGIN_DIR)
    return()
  endif()
  get_filename_component(libdir "${SLURM_LIBRARY}" DIRECTORY)
  set(dir "${libdir}/slurm")
  foreach(candidate "${libdir}/slurm-wlm" "${libdir}/slurm")
    if(EXISTS "${candidate}/auth_munge.so")
      set(dir "${candidate}")
      break()
    endif()
  endforeach()
  set(ELASTIC_SLURM_PLUGIN_DIR "${dir}" CACHE PATH "Where Slurm loads plugins from")
endfunction()

# elastic_add_test(NAME SOURCES s... LIBS l... LABELS unit|integration|gpu|fuzz
#                  [TIMEOUT s] [LAUNCHER cmd...])   LAUNCHER e.g. mpiexec -n 3
function(elastic_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS;LAUNCHER" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  elastic_target_defaults(${name})
  target_link_libraries(${name} PRIVATE ${T_LIBS} elastic_test_common GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    ELASTIC_SOURCE_DIR="${PROJECT_SOURCE_DIR}" ELASTIC_BINARY_DIR="${PROJECT_BINARY_DIR}")
  add_test(NAME ${name} COMMAND ${T_LAUNCHER} $<TARGET_FILE:${name}>)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  if(ELASTIC_TEST_TIME_SCALE)  # slower sanitizer builds (top-level CMakeLists.txt)
    math(EXPR T_TIMEOUT "${T_TIMEOUT} * ${ELASTIC_TEST_TIME_SCALE}")
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
endfunction()

# LibTorch's <torch/torch.h> costs 15-25 s in every translation unit that includes it; one
# precompiled copy (built once, for elastic_agent_lib) is reused by every other target that
# compiles LibTorch code (measured: trainer.cc 34 s -> 15 s, est_context.cc 21 s -> 9 s).
function(elastic_torch_pch target)
  if(target STREQUAL "elastic_agent_lib")
    target_precompile_headers(${target} PRIVATE <torch/torch.h>)
  else()
    # GCC takes a precompiled header only under the flags it was made with: the static
    # library's position-independent code (executables default to -fPIE; a later -fPIC wins)
    # and the Boost definitions it compiles with.
    target_compile_options(${target} PRIVATE -fPIC)
    target_link_libraries(${target} PRIVATE Boost::program_options)
    target_precompile_headers(${target} REUSE_FROM elastic_agent_lib)
  endif()
endfunction()
