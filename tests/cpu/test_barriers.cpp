#include "cpu_test_util.h"
