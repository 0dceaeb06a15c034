// C++ that fools a regex or a brace counter.
#include <cstddef>
#include <string>
#include <vector>

#define CATCH_TRY try
#define CATCH_CATCH_ALL catch (...)
#define LIB_BEGIN_EXPORTS
#define LIB_END_EXPORTS

namespace outer {
namespace inner {

/// A shape; the word class in a comment: class Fake { void f() {} };
class Shape {
 public:
  Shape() = default;
  explicit Shape(int sides) : sides_(sides) {}
  virtual ~Shape();

  /// Its area.
  virtual double Area() const = 0;

  int Sides() const { return sides_; }

  bool operator==(const Shape& other) const { return sides_ == other.sides_; }
  explicit operator bool() const { return sides_ > 0; }
  operator int() const;

  struct Point {
    double x, y;
  };

  enum class Kind { kRound, kSharp };

 private:
  int sides_ = 0;
  static constexpr const char* kText = "void fake() {}";
};

Shape::~Shape() {}

Shape::operator int() const {
  return sides_;
}

// A statement macro that opens a block: tree-sitter-cpp alone reads `CATCH_TRY {` as an
// initializer list and closes the function on its first line.
int Checked(int x) {
  if (x) {
    CATCH_TRY { x = x * 2; }
    CATCH_CATCH_ALL { x = 0; }
  }
  return x;
}

int AfterChecked() {
  return 1;
}

// A macro alone on its line (fmt's FMT_BEGIN_NAMESPACE): tree-sitter-cpp alone reads it
// as the type of the declaration after it, which then swallows the rest of the file.
LIB_BEGIN_EXPORTS
namespace exported {
inline int Exported(int c) { return c; }
}  // namespace exported
LIB_END_EXPORTS

class Square : public Shape {
 public:
  double Area() const override;
  template <typename T>
  T Scaled(T factor) const {
    auto f = [factor](T x) { return x * factor; };
    return f(static_cast<T>(side_));
  }

 private:
  double side_ = 1;
};

double Square::Area() const {
  struct Local {
    int v() { return 1; }
  };
  return side_ * side_;
}

template <typename T>
class Box {
 public:
  const T& get() const { return value_; }

 private:
  T value_;
};

template <typename T>
T twice(T x) {
  return x + x;
}

/// Only data: one chunk.
struct Options {
  bool verbose = false;
  std::string name = "}";
};

using Names = std::vector<std::string>;
typedef unsigned int uint;

int FreeFunction(int a,
                 int b) {
  return a + b;
}

namespace {
int hidden() { return 42; }
}  // namespace

}  // namespace inner

namespace api {
int OnlyAPrototype(int x);
}  // namespace api

}  // namespace outer

void outer::inner::Square_free_helper_declared_nowhere();

int main() {
  outer::inner::Square s;
  return static_cast<int>(s.Area()) + outer::inner::twice(1);
}
