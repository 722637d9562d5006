// A compiler file reaching up into the config layer with brackets: the layer check must reject it.
#include "models/hw/Precision.hpp"
#include <sim/config/ConfigLoader.hpp>
