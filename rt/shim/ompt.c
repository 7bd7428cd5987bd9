/* The OMPT tool: OpenMP's waits as synchronisation records, the way the PMPI layer records MPI
 * waits (same table, operations from the same generated list). LLVM's OpenMP runtime calls
 * ompt_start_tool at start-up; the executable exports it (the wrappers' link arguments), so the
 * runtime finds this one. Recorded per region (the event that opened the parallel region, or
 * the event a barrier, taskwait or lock sits in) and OpenMP thread number:
 *   - the time each thread waits in implicit and explicit barriers, taskwaits, taskgroups and
 *     reductions (OMPT's sync_region_wait: the wait only, not the barrier's own work);
 *   - the time it waits to acquire a lock, a critical section or an ordered region;
 *   - a worker thread's idle time between the parallel regions it works in. LLVM's runtime
 *     reports a worker's wait in a region's closing barrier as ending only when the next region
 *     starts; it is split where the team's initial thread left that barrier: the wait before is
 *     the barrier's, the rest idle.
 * Like the rest of the runtime it is never instrumented. INSTRUMENT_OMPT=0 switches it off, and
 * a tool named in OMP_TOOL_LIBRARIES is left to run instead. */
#include <omp-tools.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "instrument_operations.h"

extern uint64_t __instrument_now(void);
/* The event open on the calling thread, plus one (0: none). */
extern unsigned __instrument_current_site(void);
extern void __instrument_sync_record(unsigned operation, unsigned site, int thread, uint64_t start,
                                     uint64_t end);
extern int __instrument_ompt_wanted(void);

/* Per thread: its number in the current team, the site of the region it works in, and when
 * its current wait began. */
static __thread int thread_number;
static __thread unsigned region_site;
static __thread uint64_t wait_start;
static __thread uint64_t mutex_start;
/* When a team's thread 0 last left a closing barrier (with nested teams, any team's). */
static _Atomic uint64_t released;

static unsigned sync_operation(ompt_sync_region_t kind) {
    switch (kind) {
    case ompt_sync_region_barrier_explicit:
        return OMP_BARRIER_EXPLICIT;
    case ompt_sync_region_taskwait:
        return OMP_TASKWAIT;
    case ompt_sync_region_taskgroup:
        return OMP_TASKGROUP;
    case ompt_sync_region_reduction:
        return OMP_REDUCTION;
    default:
        return OMP_BARRIER_IMPLICIT;
    }
}

static int is_implicit(unsigned operation) { return operation == OMP_BARRIER_IMPLICIT; }

static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *parallel,
                              unsigned requested, int flags, const void *codeptr) {
    (void)task, (void)frame, (void)requested, (void)flags, (void)codeptr;
    parallel->value = __instrument_current_site();
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel,
                             ompt_data_t *task, unsigned parallelism, unsigned index, int flags) {
    (void)task, (void)parallelism;
    if ((flags & ompt_task_initial) || endpoint != ompt_scope_begin)
        return;
    thread_number = (int)index;
    region_site = parallel != NULL ? (unsigned)parallel->value : 0;
}

/* A closing barrier's wait from `start` to `end`: a worker's is split where thread 0 left the
 * barrier (its wait is only reported to end when the next region starts). */
static void closing_barrier(unsigned site, uint64_t start, uint64_t end) {
    if (thread_number == 0) {
        atomic_store_explicit(&released, end, memory_order_relaxed);
        __instrument_sync_record(OMP_BARRIER_IMPLICIT, site, 0, start, end);
        return;
    }
    uint64_t left = atomic_load_explicit(&released, memory_order_relaxed);
    if (left < start || left > end)
        left = end;
    __instrument_sync_record(OMP_BARRIER_IMPLICIT, site, thread_number, start, left);
    if (left < end)
        __instrument_sync_record(OMP_IDLE, 0, thread_number, left, end);
}

/* An implicit barrier belongs to its region (the thread may be outside every event by then); a
 * barrier, taskwait or reduction in the region's code to the event it is in. */
static void on_sync_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                         ompt_data_t *parallel, ompt_data_t *task, const void *codeptr) {
    (void)parallel, (void)task, (void)codeptr;
    if (endpoint == ompt_scope_begin) {
        wait_start = __instrument_now();
        return;
    }
    if (wait_start == 0)
        return;
    unsigned operation = sync_operation(kind);
    unsigned here = __instrument_current_site();
    uint64_t end = __instrument_now();
    if (is_implicit(operation))
        closing_barrier(region_site, wait_start, end);
    else
        __instrument_sync_record(operation, here != 0 ? here : region_site, thread_number,
                                 wait_start, end);
    wait_start = 0;
}

static void on_mutex_acquire(ompt_mutex_t kind, unsigned hint, unsigned impl, ompt_wait_id_t id,
                             const void *codeptr) {
    (void)kind, (void)hint, (void)impl, (void)id, (void)codeptr;
    mutex_start = __instrument_now();
}

static void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t id, const void *codeptr) {
    (void)id, (void)codeptr;
    if (mutex_start == 0)
        return;
    unsigned operation = kind == ompt_mutex_critical  ? OMP_CRITICAL
                         : kind == ompt_mutex_ordered ? OMP_ORDERED
                                                      : OMP_LOCK;
    __instrument_sync_record(operation, __instrument_current_site(), thread_number, mutex_start,
                             __instrument_now());
    mutex_start = 0;
}

static int initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *data) {
    (void)device, (void)data;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (set == NULL)
        return 0;
    set(ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin);
    set(ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task);
    set(ompt_callback_sync_region_wait, (ompt_callback_t)on_sync_wait);
    set(ompt_callback_mutex_acquire, (ompt_callback_t)on_mutex_acquire);
    set(ompt_callback_mutex_acquired, (ompt_callback_t)on_mutex_acquired);
    return 1;
}

static void finalize(ompt_data_t *data) { (void)data; }

ompt_start_tool_result_t *ompt_start_tool(unsigned version, const char *runtime) {
    (void)version, (void)runtime;
    static ompt_start_tool_result_t tool = {initialize, finalize, {0}};
    const char *other = getenv("OMP_TOOL_LIBRARIES");
    if ((other != NULL && other[0] != '\0') || !__instrument_ompt_wanted())
        return NULL;
    return &tool;
}
