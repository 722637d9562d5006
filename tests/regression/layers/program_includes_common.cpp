// A file of a core folder including an earlier one (program including common): the check accepts it.
#include "models/common/Diagnostics.hpp"
