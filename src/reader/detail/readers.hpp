#pragma once

#include <vector>

#include "perflow/reader/profile_reader.hpp"

namespace perflow::reader::detail {

/// Every built-in reader in the order they are tried (most specific first). Each format's
/// file defines its `*_reader()` factory; this list is in readers.cpp.
std::vector<ProfileReader> builtin_readers();

/// PyTorch profiler / Kineto Chrome-trace JSON (kineto_reader.cpp).
ProfileReader kineto_reader();

/// Nsight Systems SQLite export, schema 2.x and 3.x (nsys_sqlite_reader.cpp).
ProfileReader nsys_sqlite_reader();
/// `nsys stats` CSV: nvtx_pushpop_trace and cuda_gpu_trace (nsys_csv_reader.cpp).
ProfileReader nsys_csv_reader();
/// rocprofv3 rocpd SQLite, the ROCm 7 default output (rocpd_reader.cpp).
ProfileReader rocpd_reader();
/// rocprofv3 CSV: kernel, memory copy, marker and HIP API traces (rocprof_csv_reader.cpp).
ProfileReader rocprof_csv_reader();
/// rocprofv3 JSON, plain or gzip (rocprof_json_reader.cpp).
ProfileReader rocprof_json_reader();
/// rocprof v1 results.csv and results.db (rocprof_v1_reader.cpp).
ProfileReader rocprof_v1_reader();
ProfileReader rocprof_v1_db_reader();
/// rocprofv2 text output, one dispatch per line (rocprof_v2_reader.cpp).
ProfileReader rocprof_v2_reader();

}  // namespace perflow::reader::detail
