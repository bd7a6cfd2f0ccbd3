# Script mode: install, configure + build the consumer against the prefix, run it.
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(LAST_OUT "${out}" PARENT_SCOPE)
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
foreach(f bin/cgc bin/cgrun bin/cgcache include/cgraph/model.h include/cgraph/graph/builder.h
          lib/cmake/cgraph/cgraphConfig.cmake)
  if(NOT EXISTS ${WORK_DIR}/prefix/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
set(extra)
if(SANITIZE)
  # The installed static libraries carry the sanitizer instrumentation of this build.
  set(extra -DCMAKE_CXX_FLAGS=-fsanitize=${SANITIZE} -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE})
endif()
run(${CMAKE_COMMAND} -S ${CONSUMER_SRC} -B ${WORK_DIR}/build -G Ninja
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release ${extra})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)
if(NOT LAST_OUT MATCHES "wrote [0-9]+ bytes")
  message(FATAL_ERROR "unexpected consumer output: ${LAST_OUT}")
endif()
message(STATUS "consumer: ${LAST_OUT}")

# The C++ example (examples/cpp-runner, a project of its own, C++ only) against the
# prefix: links the cpu and opencl backends, runs the saxpy example compiled by the
# installed cgc, checks y = 2 * 1 + 1 on every element.
run(${WORK_DIR}/prefix/bin/cgc ${EXAMPLES_DIR}/saxpy/graph.json -o ${WORK_DIR}/saxpy.cgf -q)
run(${CMAKE_COMMAND} -S ${EXAMPLES_DIR}/cpp-runner -B ${WORK_DIR}/runner -G Ninja
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release ${extra})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/runner)
run(${WORK_DIR}/runner/cpp-runner ${WORK_DIR}/saxpy.cgf cpu)
if(NOT LAST_OUT MATCHES "cpu: y\\[0\\.\\.2\\] = 3 3 3, sum 3\\.14573e\\+06")
  message(FATAL_ERROR "unexpected cpp-runner output: ${LAST_OUT}")
endif()
message(STATUS "cpp-runner: ${LAST_OUT}")
