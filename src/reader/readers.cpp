#include "detail/readers.hpp"

namespace perflow::reader::detail {

// Each reader's factory, defined in that format's file.

std::vector<ProfileReader> builtin_readers() {
  std::vector<ProfileReader> readers;
  readers.push_back(kineto_reader());
  readers.push_back(nsys_sqlite_reader());
  readers.push_back(rocpd_reader());
  readers.push_back(rocprof_v1_db_reader());
  readers.push_back(nsys_csv_reader());
  readers.push_back(rocprof_csv_reader());
  readers.push_back(rocprof_v1_reader());
  readers.push_back(rocprof_json_reader());
  readers.push_back(rocprof_v2_reader());
  return readers;
}

}  // namespace perflow::reader::detail
