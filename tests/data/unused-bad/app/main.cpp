#include "../host/lib.h"

// Out of the checked scope: never reported.
int app_helper_unused(int x) { return x + 2; }

int main(int argc, char**) {
  Shape* shape = make_shape("square");
  return used_by_app(argc) + (shape ? shape->area() : 0) == 0 ? 1 : 0;
}
