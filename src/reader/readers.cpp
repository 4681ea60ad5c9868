#include "detail/readers.hpp"

namespace perflow::reader::detail {

// Each reader's factory, defined in that format's file.

std::vector<ProfileReader> builtin_readers() {
  std::vector<ProfileReader> readers;
  return readers;
}

}  // namespace perflow::reader::detail
