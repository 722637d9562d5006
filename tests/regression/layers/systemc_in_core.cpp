// A core file pulling in SystemC: the layer check must reject it.
#include "models/hw/Precision.hpp"
#include <systemc>
