# Runs one golden case: `cmake -DPERFLOW=<exe> -DCASE_DIR=<dir> -DOUT_DIR=<dir> -P this`.
# <exe> is the perflow command, or an example program.
#
# A case directory holds:
#   args              the command-line arguments, one per line; @OUT@ is a fresh output dir
#   env               optional: NAME=VALUE environment variables for the run, one per line
#   expected.exit     the exit code
#   expected.stdout   standard output   (the output dir's path appears as @OUT@)
#   expected.stderr   standard error
#   expected.out.<f>  the expected content of output file <f> in @OUT@
#   expected.png.<f>  "<width>x<height>" of PNG output file <f> in @OUT@: a PNG's bytes
#                     depend on the zlib and libpng versions, so only its size is pinned
#                     here (the visualizer tests check its pixels)
# The command runs in the case directory. Any other file left in @OUT@ fails the case (a
# half-written or temporary file). With PERFLOW_UPDATE_GOLDEN=1 in the environment the
# expected files are rewritten from the actual run instead; review the diff.
cmake_minimum_required(VERSION 3.25)

file(STRINGS "${CASE_DIR}/args" raw_args)
set(args)
foreach(arg IN LISTS raw_args)
  string(REPLACE "@OUT@" "${OUT_DIR}" arg "${arg}")
  list(APPEND args "${arg}")
endforeach()

file(REMOVE_RECURSE "${OUT_DIR}" "${OUT_DIR}.actual")
file(MAKE_DIRECTORY "${OUT_DIR}" "${OUT_DIR}.actual")
# An optional `env` file: NAME=VALUE lines set for the run.
set(env_prefix)
if(EXISTS "${CASE_DIR}/env")
  file(STRINGS "${CASE_DIR}/env" env_lines)
  set(env_prefix "${CMAKE_COMMAND}" -E env ${env_lines})
endif()
execute_process(COMMAND ${env_prefix} "${PERFLOW}" ${args}
  WORKING_DIRECTORY "${CASE_DIR}"
  RESULT_VARIABLE exit_code OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
string(REPLACE "${OUT_DIR}" "@OUT@" stdout "${stdout}")
string(REPLACE "${OUT_DIR}" "@OUT@" stderr "${stderr}")
file(WRITE "${OUT_DIR}.actual/expected.exit" "${exit_code}\n")
file(WRITE "${OUT_DIR}.actual/expected.stdout" "${stdout}")
file(WRITE "${OUT_DIR}.actual/expected.stderr" "${stderr}")

set(update "$ENV{PERFLOW_UPDATE_GOLDEN}")
set(failed FALSE)

function(check name actual_file)
  set(expected_file "${CASE_DIR}/${name}")
  if(update)
    if(EXISTS "${actual_file}")
      file(COPY_FILE "${actual_file}" "${expected_file}")
    else()
      file(REMOVE "${expected_file}")
    endif()
    return()
  endif()
  if(NOT EXISTS "${actual_file}")
    message(SEND_ERROR "${name}: the run did not produce this file")
    set(failed TRUE PARENT_SCOPE)
    return()
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${expected_file}" "${actual_file}"
    RESULT_VARIABLE different)
  if(different)
    execute_process(COMMAND diff -u "${expected_file}" "${actual_file}" OUTPUT_VARIABLE diff)
    message(SEND_ERROR "${name} differs from the golden file:\n${diff}")
    set(failed TRUE PARENT_SCOPE)
  endif()
endfunction()

check(expected.exit "${OUT_DIR}.actual/expected.exit")
check(expected.stdout "${OUT_DIR}.actual/expected.stdout")
check(expected.stderr "${OUT_DIR}.actual/expected.stderr")

file(GLOB expected_outputs RELATIVE "${CASE_DIR}" "${CASE_DIR}/expected.out.*")
set(known)
foreach(expected IN LISTS expected_outputs)
  string(REPLACE "expected.out." "" output "${expected}")
  list(APPEND known "${output}")
  check("${expected}" "${OUT_DIR}/${output}")
endforeach()

# The width and height in a PNG's IHDR chunk (bytes 16-23, big-endian), or "not a PNG".
function(png_size file out)
  file(READ "${file}" header LIMIT 24 HEX)
  if(NOT header MATCHES "^89504e470d0a1a0a........49484452")
    set(${out} "not a PNG" PARENT_SCOPE)
    return()
  endif()
  string(SUBSTRING "${header}" 32 8 width_hex)
  string(SUBSTRING "${header}" 40 8 height_hex)
  math(EXPR width "0x${width_hex}")
  math(EXPR height "0x${height_hex}")
  set(${out} "${width}x${height}" PARENT_SCOPE)
endfunction()

file(GLOB expected_pngs RELATIVE "${CASE_DIR}" "${CASE_DIR}/expected.png.*")
foreach(expected IN LISTS expected_pngs)
  string(REPLACE "expected.png." "" output "${expected}")
  list(APPEND known "${output}")
  if(NOT EXISTS "${OUT_DIR}/${output}")
    if(update)
      file(REMOVE "${CASE_DIR}/${expected}")
    else()
      message(SEND_ERROR "${output}: the run did not produce this file")
      set(failed TRUE)
    endif()
    continue()
  endif()
  png_size("${OUT_DIR}/${output}" actual_size)
  if(update)
    file(WRITE "${CASE_DIR}/${expected}" "${actual_size}\n")
    continue()
  endif()
  file(READ "${CASE_DIR}/${expected}" expected_size)
  string(STRIP "${expected_size}" expected_size)
  if(NOT actual_size STREQUAL expected_size)
    message(SEND_ERROR "${output}: expected a ${expected_size} PNG, got ${actual_size}")
    set(failed TRUE)
  endif()
endforeach()

file(GLOB produced RELATIVE "${OUT_DIR}" "${OUT_DIR}/*")
foreach(output IN LISTS produced)
  if(NOT output IN_LIST known)
    if(update AND output MATCHES "\\.png$")
      png_size("${OUT_DIR}/${output}" actual_size)
      file(WRITE "${CASE_DIR}/expected.png.${output}" "${actual_size}\n")
    elseif(update)
      file(COPY_FILE "${OUT_DIR}/${output}" "${CASE_DIR}/expected.out.${output}")
    else()
      message(SEND_ERROR "unexpected output file left behind: ${output}")
    endif()
  endif()
endforeach()
