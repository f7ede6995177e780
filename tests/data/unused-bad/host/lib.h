#pragma once

struct Widget {
  int size = 0;
  int unused_method() const;
};

int used_by_app(int x);
int used_by_test(int x);
int used_inside_only(int x);
int unused_function(int x);

// Unused, but inline: no symbol outside a caller.
inline int inline_helper(int x) { return x + 1; }

// Instantiated in lib.cpp: a weak symbol, never checked.
template <typename T>
T twice(T x) {
  return x + x;
}

struct Shape {
  virtual ~Shape() = default;
  virtual int area() const = 0;
};

// Square::area is called through the vtable only.
struct Square : Shape {
  int side = 1;
  int area() const override;
};

using Factory = Shape* (*)();
bool register_shape(const char* name, Factory factory);
Shape* make_shape(const char* name);
Shape* make_square();

bool operator==(const Widget& a, const Widget& b);

extern "C" int fixture_plugin_entry(void);
