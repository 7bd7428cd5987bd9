// Exceptions caught by a catcher without a frame (throttled, or too small for an event at late
// placement), as the longjmps of longjmp_throttled.c: guarded() calls work() inside a try,
// CALLS times, and every EVERY-th call fail() throws at once: 20 fail calls, each leaving its
// frame open until the landing pad in guarded() closes it. Prints the errors caught.
#include <cstdio>
#include <stdexcept>

constexpr int CALLS = 200000;
constexpr int EVERY = 10000;

volatile unsigned sink;

__attribute__((noinline)) void work(int n) {
    for (int i = 0; i < n; i++)
        sink = sink * 31 + static_cast<unsigned>(i);
}

__attribute__((noinline)) void fail(int n) {
    for (int i = 0; i < n; i++)
        sink += static_cast<unsigned>(i);
    throw std::runtime_error("fail");
}

__attribute__((noinline)) int guarded(int i) {
    try {
        if (i % EVERY == 0)
            fail(8);
        work(50);
        return 0;
    } catch (const std::exception &) {
        return 1;
    }
}

int main() {
    int caught = 0;
    for (int i = 0; i < CALLS; i++)
        caught += guarded(i);
    std::printf("caught=%d\n", caught);
    return 0;
}
