# Helpers shared by every folder's CMakeLists.txt.

macro(cgraph_add_subdirectory_if_present dir)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/CMakeLists.txt)
    add_subdirectory(${dir})
  endif()
endmacro()

# cgraph_add_library(NAME target SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
# One library per folder: headers under <folder>/include/cgraph/..., installed and exported.
function(cgraph_add_library)
  cmake_parse_arguments(A "" "NAME" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${A_NAME} STATIC ${A_SOURCES})
  add_library(cgraph::${A_NAME} ALIAS ${A_NAME})
  target_include_directories(${A_NAME} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${A_NAME} PUBLIC ${A_PUBLIC_DEPS} PRIVATE ${A_PRIVATE_DEPS})
  install(TARGETS ${A_NAME} EXPORT cgraphTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/include)
    install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endfunction()

# cgraph_add_tool(NAME exe SOURCES ... DEPS ...)
function(cgraph_add_tool)
  cmake_parse_arguments(A "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_executable(${A_NAME} ${A_SOURCES})
  target_link_libraries(${A_NAME} PRIVATE ${A_DEPS})
  target_compile_definitions(${A_NAME} PRIVATE CGRAPH_VERSION="${PROJECT_VERSION}")
  install(TARGETS ${A_NAME} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()

# cgraph_add_test(NAME t SOURCES ... DEPS ... [LABELS ...])
# A Catch2 (v2) test executable registered with ctest as one test per executable.
function(cgraph_add_test)
  cmake_parse_arguments(A "" "NAME" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${A_NAME} ${A_SOURCES})
  target_link_libraries(${A_NAME} PRIVATE cgraph_catch_main ${A_DEPS})
  target_compile_definitions(${A_NAME} PRIVATE
    CGRAPH_SOURCE_DIR="${PROJECT_SOURCE_DIR}" CGRAPH_BINARY_DIR="${PROJECT_BINARY_DIR}")
  add_test(NAME ${A_NAME} COMMAND ${A_NAME})
  set_tests_properties(${A_NAME} PROPERTIES LABELS "${A_LABELS}")
endfunction()
