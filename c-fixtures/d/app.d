// A D program for the other-front-ends test: a recursive routine, a template instantiated in
// this module, and a loop, with a result that shows the instrumented build computes the same.
import std.stdio;

int fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

pragma(inline, false)
T scaled(T)(T value, T factor)
{
    return value * factor;
}

void main()
{
    long sum = 0;
    foreach (i; 0 .. 1000)
        sum += scaled!long(i, 3);
    writefln("fib(20) = %d, sum = %d", fib(20), sum);
}
