// A compiler file including only the core and the compiler: the layer check accepts it.
#include "models/hw/Precision.hpp"
#include "workloads/graph/Graph.hpp"
#include <vector>
