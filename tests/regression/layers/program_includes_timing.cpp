// A file of an earlier core folder including a later one (program including timing): the check must reject it.
#include "models/timing/VertexCosts.hpp"
