// Moved to format/include/cgraph/expr.h (the .cgf reader decodes stored expression
// programs, and format is below lib/graph). Kept so existing includes still work.
#pragma once
#include <cgraph/expr.h>
