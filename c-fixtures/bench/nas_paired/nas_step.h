/* Included (-include) into both copies of a bench-nas program by the paired harness's build
 * (scripts/nas-paired): each time step waits for its turn and is timed (harness.c). */
void nas_step_begin(void);
void nas_step_end(void);
#define NAS_STEP(call)                                                                             \
    do {                                                                                           \
        nas_step_begin();                                                                          \
        call;                                                                                      \
        nas_step_end();                                                                            \
    } while (0)
