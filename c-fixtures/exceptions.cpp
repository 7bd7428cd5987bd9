// Exceptions crossing instrumented frames, with known counts. For i in 0..9:
//   top(i) calls middle(i), which holds a Guard (destructor runs during unwinding) and calls
//   leaf(i): it throws when i % 3 == 0 (i = 0, 3, 6), through middle's cleanup pad.
//   Otherwise top calls plain(i), which has no landing pad, and leaf(i + 1) throws when
//   (i + 1) % 3 == 0 (i = 2, 5, 8), straight through plain.
//   Inside a loop in looped(), a throw is caught in the loop body and the loop goes on.
// So: top 9, middle 9, ~Guard 9, plain 6, leaf 9 + 6 + 4 = 19, caught 6 in top and 1 in looped,
// and after() is called by main once, after all of it.
#include <cstdio>
#include <stdexcept>

volatile int sink;

struct Guard {
    __attribute__((noinline)) ~Guard() { sink++; }
};

__attribute__((noinline)) void leaf(int i) {
    sink++;
    if (i % 3 == 0)
        throw std::runtime_error("leaf");
}

__attribute__((noinline)) void middle(int i) {
    Guard g;
    leaf(i);
}

__attribute__((noinline)) void plain(int i) { leaf(i + 1); }

__attribute__((noinline)) int top(int i) {
    try {
        middle(i);
        plain(i);
        return 0;
    } catch (const std::exception &) {
        return 1;
    }
}

__attribute__((noinline)) int looped() {
    int caught = 0;
    for (int i = 1; i <= 4; i++) {
        try {
            leaf(i);
        } catch (const std::exception &) {
            caught++;
        }
    }
    return caught;
}

__attribute__((noinline)) void after() { sink++; }

int main() {
    int caught = 0;
    for (int i = 0; i < 9; i++)
        caught += top(i);
    caught += looped();
    after();
    std::printf("caught %d\n", caught);
    return 0;
}
