// A compiler file reaching up into the config layer by a relative path: the layer check must reject it.
#include "models/hw/Precision.hpp"
#include "../../sim/config/ConfigLoader.hpp"
