/* Marks for instrumented C and C++ code.
 * INSTRUMENT_OFF keeps a routine uninstrumented: instrument-cc leaves it alone, and its callees
 * are measured as children of its caller. */
#ifndef INSTRUMENT_H
#define INSTRUMENT_H
#define INSTRUMENT_OFF __attribute__((annotate("no_instrument")))
#endif
