# The installed package, tested by small projects that use it:
#   cmake -DMODE=install -DBUILD_DIR= -DWORK_DIR= -P this
#     installs the build tree into WORK_DIR/prefix (once, shared by the projects);
#   cmake -DMODE=project -DPROJECT=<full|core|components> -DSOURCE_DIR= -DWORK_DIR=
#         -DBUILD_TYPE= [-DRUN=<executable>] [-DFORBIDDEN=<regex>] -P this
#     configures and builds tests/consumer/PROJECT against the prefix, runs RUN, and fails
#     if the executable's link line matches FORBIDDEN (libraries it must not pull in).
cmake_minimum_required(VERSION 3.25)
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(code)
    message(FATAL_ERROR "failed (${code}): ${ARGN}\n${out}")
  endif()
  message("${out}")
endfunction()

if(MODE STREQUAL "install")
  file(REMOVE_RECURSE "${WORK_DIR}")
  run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
elseif(MODE STREQUAL "project")
  set(build "${WORK_DIR}/${PROJECT}")
  file(REMOVE_RECURSE "${build}")
  # Makefiles, so the link line is in a known place (CMakeFiles/<target>.dir/link.txt).
  run(${CMAKE_COMMAND} -G "Unix Makefiles" -S "${SOURCE_DIR}/tests/consumer/${PROJECT}"
      -B "${build}" -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
  if(RUN)
    run(${CMAKE_COMMAND} --build "${build}")
    run("${build}/${RUN}")
  endif()
  if(FORBIDDEN)
    file(READ "${build}/CMakeFiles/${RUN}.dir/link.txt" link)
    string(TOLOWER "${link}" link)
    if(link MATCHES "${FORBIDDEN}")
      message(FATAL_ERROR "${PROJECT} links '${CMAKE_MATCH_0}', which it must not:\n${link}")
    endif()
    message("link line clean of ${FORBIDDEN}")
  endif()
else()
  message(FATAL_ERROR "MODE must be install or project, got '${MODE}'")
endif()
