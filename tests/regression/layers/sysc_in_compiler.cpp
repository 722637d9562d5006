// A compiler file pulling in a SystemC implementation header: the layer check must reject it.
#include "models/hw/Precision.hpp"
#include <sysc/kernel/sc_time.h>
