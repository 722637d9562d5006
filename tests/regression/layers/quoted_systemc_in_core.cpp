// A core file pulling in a SystemC header by a quoted name: the layer check must reject it.
#include "models/hw/Precision.hpp"
#include "systemc.h"
