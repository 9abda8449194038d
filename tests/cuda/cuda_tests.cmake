# The CUDA tests: included (deferred) at the end of the top-level CMakeLists.txt by its [CUDA]
# block, only in builds with the CUDA backend.
#
# attnsim-cuda-tests is its own Catch2 executable because of skip semantics: Catch2 v2 has no
# "skipped", so its main() exits with 77 when no CUDA device is present, and every test
# carries SKIP_RETURN_CODE 77 — CTest reports them as skipped (never passed) on a machine
# without a GPU.
if(NOT BUILD_TESTING)
  return()
endif()
find_package(Catch2 REQUIRED)
include(Catch)
add_executable(attnsim-cuda-tests
  ${CMAKE_SOURCE_DIR}/tests/cuda/cuda_test_main.cpp
  ${CMAKE_SOURCE_DIR}/tests/cuda/test_cuda_parity.cpp)
target_compile_options(attnsim-cuda-tests PRIVATE -Werror)
target_link_libraries(attnsim-cuda-tests PRIVATE attnsim_cuda attnsim_engine Catch2::Catch2)
target_compile_definitions(attnsim-cuda-tests PRIVATE
  ATTNSIM_SOURCE_DIR="${CMAKE_SOURCE_DIR}" ATTNSIM_CLI="$<TARGET_FILE:attnsim-cli>")
add_dependencies(attnsim-cuda-tests attnsim-cli)
# One CTest test per TEST_CASE; listing (at build time) needs no device.
catch_discover_tests(attnsim-cuda-tests
  TEST_PREFIX "cuda: "
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
  PROPERTIES SKIP_RETURN_CODE 77 LABELS cuda)
