# Shared compile settings for every Tessera target.

set(TESSERA_SOURCE_DIR "${CMAKE_SOURCE_DIR}")
set(TESSERA_BINARY_DIR "${CMAKE_BINARY_DIR}")

set(_tessera_warnings -Wall -Wextra -Wno-unused-parameter
    -Wno-missing-field-initializers)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC 12 reports false -Wrestrict positives inside std::string operator+
  # (GCC bug 105329) at -O3.
  list(APPEND _tessera_warnings -Wno-restrict)
endif()
if(TESSERA_WERROR)
  list(APPEND _tessera_warnings -Werror)
endif()

set(_tessera_sanitize_flags "")
if(TESSERA_SANITIZE)
  string(REPLACE ";" "," _san "${TESSERA_SANITIZE}")
  set(_tessera_sanitize_flags -fsanitize=${_san} -fno-omit-frame-pointer
      -fno-sanitize=vptr -fno-sanitize-recover=all)
  add_compile_options(${_tessera_sanitize_flags})
  add_link_options(${_tessera_sanitize_flags})
  if("address" IN_LIST TESSERA_SANITIZE)
    # See the header: LLVM's allocator poisoning is compiled out of our files
    # (the LLVM/MLIR libraries it pairs with are not instrumented).
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-include${CMAKE_SOURCE_DIR}/cmake/AsanLLVMHeaders.h>)
  endif()
endif()

if(TESSERA_ENABLE_ASSERTIONS)
  # Keep our own asserts; LLVM's headers do not change layout with NDEBUG
  # (that is keyed on LLVM_ENABLE_ABI_BREAKING_CHECKS).
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-UNDEBUG>)
endif()

# tessera_target_defaults(<target> [NO_EXCEPTIONS])
#   Warnings, include paths. Compiler code follows LLVM (no exceptions).
function(tessera_target_defaults target)
  cmake_parse_arguments(ARG "NO_EXCEPTIONS" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE ${_tessera_warnings})
  if(ARG_NO_EXCEPTIONS)
    target_compile_options(${target} PRIVATE -fno-exceptions)
  endif()
endfunction()

# tessera_mlir_target(<target>)
#   Adds the LLVM/MLIR include paths and links the shared libMLIR/libLLVM.
function(tessera_mlir_target target)
  target_include_directories(${target} SYSTEM PUBLIC
    ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
  target_compile_definitions(${target} PUBLIC ${LLVM_DEFINITIONS})
  target_link_libraries(${target} PUBLIC MLIR LLVM)
endfunction()
