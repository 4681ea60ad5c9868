// Explorations from Python: measured costs from profiles, sweeps and searches.
#include "bindings.hpp"

namespace perflow::python {

void bind_explore(py::module_& /*m*/) {}

}  // namespace perflow::python
