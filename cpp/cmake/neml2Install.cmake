# Install libneml2, its headers and a relocatable CMake package so that
#   find_package(neml2) + target_link_libraries(app neml2::aoti)
# works from a plain CMake install and from the neml2-aoti-runtime wheel.
include(CMakePackageConfigHelpers)

set(NEML2_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/neml2" CACHE STRING
  "Where neml2Config.cmake is installed, relative to the prefix")

install(TARGETS neml2 EXPORT neml2Targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/aoti/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/ops/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# neml2/aoti/schema.h, generated from the artifact contract (aoti/CMakeLists.txt)
install(DIRECTORY ${PROJECT_BINARY_DIR}/aoti/generated/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/dispatch/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET neml2_eager)
  # libneml2_eager (neml2::eager); the host links libpython, the library does not.
  install(TARGETS neml2_eager EXPORT neml2Targets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/eager/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
install(EXPORT neml2Targets NAMESPACE neml2:: DESTINATION ${NEML2_INSTALL_CMAKEDIR})
if(TARGET neml2_mpi)
  # libneml2_mpi (neml2::mpi) in its own export set: a consumer without MPI still gets the rest.
  install(TARGETS neml2_mpi EXPORT neml2MPITargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/mpi/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT neml2MPITargets NAMESPACE neml2:: DESTINATION ${NEML2_INSTALL_CMAKEDIR})
endif()
install(FILES ${PROJECT_SOURCE_DIR}/cmake/FindTorchWheel.cmake DESTINATION ${NEML2_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/neml2Config.cmake.in
  ${PROJECT_BINARY_DIR}/neml2Config.cmake
  INSTALL_DESTINATION ${NEML2_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/neml2ConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/neml2Config.cmake ${PROJECT_BINARY_DIR}/neml2ConfigVersion.cmake
  DESTINATION ${NEML2_INSTALL_CMAKEDIR})
