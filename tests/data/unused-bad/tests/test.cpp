#include "../host/lib.h"

int run_fixture_test() { return used_by_test(3) == 2 ? 0 : 1; }
