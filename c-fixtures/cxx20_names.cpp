// C++20 names that older demanglers cannot read: constrained templates (requires clauses,
// concepts as type constraints), template parameter declarations in the mangling (Tk, Tn),
// a generic lambda, and libstdc++'s std::string internals (tests/tests/names.rs compares every
// name the report shows with llvm-cxxfilt-22's reading).
#include <concepts>
#include <type_traits>
#include <string>
#include <vector>
template <typename T> requires std::integral<T> T twice(T x) { return x * 2; }
template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0> T half(T x) { return x / 2; }
template <std::integral auto N> int addn(int x) { return x + N; }
template <typename T> concept Small = sizeof(T) <= 4;
template <Small T> T id(T x) { return x; }
auto lam = [](auto x) { return x + 1; };
struct S { template <typename U> requires (sizeof(U) > 1) void f(U) {} };
int main() {
    S s;
    s.f(2L);
    // 6 + 1 + 6 + 4 + 2 + 1
    return twice(3) + (int)half(2.0) + addn<5>(1) + id(4) + lam(1) + (int)std::to_string(5).size();
}
