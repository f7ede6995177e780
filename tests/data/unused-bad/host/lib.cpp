#include "lib.h"

// Called from used_by_app below, where the optimiser inlines it: no relocation names it.
int used_inside_only(int x) { return x * 3 + 1; }

int used_by_app(int x) { return used_inside_only(x) + twice(x); }

int used_by_test(int x) { return x - 1; }

#ifndef WITHOUT_DEAD_CODE
int unused_function(int x) { return x * x + 7; }

int Widget::unused_method() const { return size * 2; }
#endif

bool operator==(const Widget& a, const Widget& b) { return a.size == b.size; }

extern "C" int fixture_plugin_entry(void) { return 42; }

template int twice<int>(int);
