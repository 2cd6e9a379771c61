# Find the C++ side of an installed torch *wheel* (PyPI), without torch's own
# TorchConfig.cmake, which insists on a CUDA toolkit whenever the wheel is a
# CUDA build. We only need the CPU libraries (c10, torch_cpu, torch) and the
# headers, so we ask the Python interpreter where the wheel lives.
#
# Inputs (cache variables):
#   Python3_EXECUTABLE   interpreter that can `import torch` (default: the
#                        python on PATH; scikit-build-core sets it)
#   TORCH_WHEEL_DIR      skip the interpreter and use this torch package dir
# Outputs:
#   TorchWheel_FOUND, TorchWheel_VERSION, TORCH_WHEEL_DIR, TORCH_WHEEL_LIB_DIR
#   imported targets torch::c10, torch::torch_cpu, torch::torch (interface
#   target bundling both plus the include dirs and the C++ ABI flag), and
#   torch::torch_python (only for Python extension modules).

if(NOT TORCH_WHEEL_DIR)
  if(NOT Python3_EXECUTABLE)
    find_program(Python3_EXECUTABLE NAMES python3 python)
  endif()
  if(NOT Python3_EXECUTABLE)
    message(FATAL_ERROR
      "neml2: no Python interpreter found to locate the torch wheel.\n"
      "Run the build through the workspace (`uv run nox -s cpp`) or pass "
      "-DPython3_EXECUTABLE=/path/to/venv/bin/python (a Python that can `import torch`).")
  endif()
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" -c
      "import os, torch; print(os.path.dirname(torch.__file__)); print(torch.__version__.split('+')[0]); print(int(torch._C._GLIBCXX_USE_CXX11_ABI))"
    RESULT_VARIABLE _tw_rc
    OUTPUT_VARIABLE _tw_out
    ERROR_VARIABLE _tw_err
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _tw_rc EQUAL 0)
    message(FATAL_ERROR
      "neml2: `${Python3_EXECUTABLE}` cannot import torch:\n${_tw_err}\n"
      "Fix: run `uv sync` at the repository root and configure with "
      "-DPython3_EXECUTABLE=<repo>/.venv/bin/python, or use `uv run nox -s cpp`.")
  endif()
  string(REPLACE "\n" ";" _tw_lines "${_tw_out}")
  list(GET _tw_lines 0 _tw_dir)
  list(GET _tw_lines 1 _tw_version)
  list(GET _tw_lines 2 _tw_abi)
  set(TORCH_WHEEL_DIR "${_tw_dir}" CACHE PATH "torch package directory of the wheel")
  set(TORCH_WHEEL_VERSION "${_tw_version}" CACHE STRING "torch version of the wheel")
  set(TORCH_WHEEL_CXX11_ABI "${_tw_abi}" CACHE STRING "torch _GLIBCXX_USE_CXX11_ABI")
endif()

if(NOT EXISTS "${TORCH_WHEEL_DIR}/include/ATen/ATen.h")
  message(FATAL_ERROR
    "neml2: ${TORCH_WHEEL_DIR} has no C++ headers (include/ATen/ATen.h); "
    "it is not a torch wheel directory.")
endif()
if(NOT TORCH_WHEEL_VERSION)
  # Given a directory rather than an interpreter: read the wheel's version.py.
  file(STRINGS "${TORCH_WHEEL_DIR}/version.py" _tw_vline REGEX "^__version__ *=")
  if(_tw_vline MATCHES "['\"]([0-9]+\\.[0-9]+\\.[0-9]+)")
    set(TORCH_WHEEL_VERSION "${CMAKE_MATCH_1}" CACHE STRING "torch version of the wheel")
  endif()
endif()
if(NOT DEFINED TORCH_WHEEL_CXX11_ABI)
  # Every torch wheel since 2.7 uses the C++11 ABI.
  set(TORCH_WHEEL_CXX11_ABI 1)
endif()

set(TORCH_WHEEL_LIB_DIR "${TORCH_WHEEL_DIR}/lib")
set(_tw_includes "${TORCH_WHEEL_DIR}/include" "${TORCH_WHEEL_DIR}/include/torch/csrc/api/include")

foreach(_lib c10 torch_cpu torch torch_python)
  find_library(TORCH_WHEEL_${_lib}_LIBRARY NAMES ${_lib} PATHS "${TORCH_WHEEL_LIB_DIR}" NO_DEFAULT_PATH)
endforeach()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(TorchWheel
  REQUIRED_VARS TORCH_WHEEL_DIR TORCH_WHEEL_c10_LIBRARY TORCH_WHEEL_torch_cpu_LIBRARY
  VERSION_VAR TORCH_WHEEL_VERSION)

if(TorchWheel_FOUND AND NOT TARGET torch::torch)
  set(TorchWheel_VERSION "${TORCH_WHEEL_VERSION}")
  foreach(_lib c10 torch_cpu)
    add_library(torch::${_lib} SHARED IMPORTED GLOBAL)
    set_target_properties(torch::${_lib} PROPERTIES
      IMPORTED_LOCATION "${TORCH_WHEEL_${_lib}_LIBRARY}"
      IMPORTED_NO_SONAME FALSE)
  endforeach()
  add_library(torch::torch INTERFACE IMPORTED GLOBAL)
  target_include_directories(torch::torch SYSTEM INTERFACE ${_tw_includes})
  target_compile_definitions(torch::torch INTERFACE
    _GLIBCXX_USE_CXX11_ABI=${TORCH_WHEEL_CXX11_ABI})
  target_link_libraries(torch::torch INTERFACE torch::torch_cpu torch::c10)
  if(TORCH_WHEEL_torch_python_LIBRARY)
    add_library(torch::torch_python SHARED IMPORTED GLOBAL)
    set_target_properties(torch::torch_python PROPERTIES
      IMPORTED_LOCATION "${TORCH_WHEEL_torch_python_LIBRARY}")
  endif()
endif()
