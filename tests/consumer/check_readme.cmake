# docs/cpp-api.md's "Using an installed PerFlow" shows the core consumer's files verbatim; this
# fails when one of them changes without the other: cmake -DSOURCE_DIR= -P this
cmake_minimum_required(VERSION 3.25)
file(READ "${SOURCE_DIR}/docs/cpp-api.md" readme)
foreach(file IN ITEMS CMakeLists.txt main.cpp)
  file(READ "${SOURCE_DIR}/tests/consumer/core/${file}" content)
  string(FIND "${readme}" "\n${content}```" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "docs/cpp-api.md does not show tests/consumer/core/${file} as it is")
  endif()
endforeach()
