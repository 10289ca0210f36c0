# vramplan._core, the Python package's extension module (src/python/, a front end like cli/): the
# core and Hub libraries linked in, so that `import vramplan` needs nothing but the standard
# library. In a build dir the package is laid out in <build>/python/vramplan (python/vramplan's
# sources beside the module: PYTHONPATH=<build>/python); under scikit-build-core (pip install .)
# the module is installed into the wheel's vramplan/ beside the same sources.
find_package(Python 3.10 REQUIRED COMPONENTS Interpreter Development.Module)
find_package(pybind11 2.10 CONFIG REQUIRED)
if(VRAMPLAN_PREBUILT)
  set(libraries ${VRAMPLAN_PREBUILT}/vramplan_libraries.cmake)
  if(NOT EXISTS ${libraries})
    message(FATAL_ERROR "VRAMPLAN_PREBUILT=${VRAMPLAN_PREBUILT}: no ${libraries}; build that dir "
                        "first with -DVRAMPLAN_BUILD_PYTHON=ON (scripts/test.sh does)")
  endif()
  include(${libraries})
endif()
pybind11_add_module(_core MODULE src/python/module.cc)
target_include_directories(_core PRIVATE src)
target_link_libraries(_core PRIVATE vramplan_core vramplan_hub)
if(SKBUILD OR VRAMPLAN_PREBUILT)
  install(TARGETS _core LIBRARY DESTINATION vramplan)
else()
  set_target_properties(_core PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/python/vramplan)
  # The pure-Python sources next to the module, copied on every build (cheap) so edits show up.
  add_custom_target(vramplan_python ALL
    COMMAND ${CMAKE_COMMAND} -E copy_directory ${CMAKE_SOURCE_DIR}/python/vramplan
            ${CMAKE_BINARY_DIR}/python/vramplan
    COMMENT "Laying out the vramplan Python package in ${CMAKE_BINARY_DIR}/python")
  add_dependencies(_core vramplan_python)
  # The libraries as they are, for a wheel built over this dir (VRAMPLAN_PREBUILT).
  export(TARGETS vramplan_core vramplan_hub FILE ${CMAKE_BINARY_DIR}/vramplan_libraries.cmake)
  if(BUILD_TESTING)
    add_test(NAME python.pytest
             COMMAND ${Python_EXECUTABLE} -m pytest -q -p no:cacheprovider
                     ${CMAKE_SOURCE_DIR}/python/tests)
    # The example notebook, run in a fresh ipykernel (nbclient; Debian's python3-nbclient).
    add_test(NAME python.notebook
             COMMAND ${Python_EXECUTABLE} ${CMAKE_SOURCE_DIR}/python/tests/run_notebook.py
                     ${CMAKE_SOURCE_DIR}/python/examples/vramplan.ipynb)
    # The wheel built over this dir and installed into a fresh virtual environment (pip reaches
    # PyPI for the pinned build requirements).
    add_test(NAME python.wheel
             COMMAND bash ${CMAKE_SOURCE_DIR}/tests/python/wheel_test.sh ${CMAKE_BINARY_DIR})
    set_tests_properties(python.pytest python.notebook PROPERTIES ENVIRONMENT
        "PYTHONPATH=${CMAKE_BINARY_DIR}/python;VRAMPLAN_CLI=$<TARGET_FILE:vramplan>;VRAMPLAN_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
  endif()
endif()
