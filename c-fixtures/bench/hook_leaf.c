/* leaf.c's leaf routine under the name its build gives it (-DLEAF=...), so that hook_paired.c
 * can hold a plain, an instrumented and a hand-hooked copy of it in one program. */
__attribute__((noinline)) unsigned LEAF(unsigned x) { return x * 2654435761u + 1; }
