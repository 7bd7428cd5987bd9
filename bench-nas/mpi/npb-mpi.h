/* What the MPI kernels share: the rank counts they run on. */
#ifndef NPB_MPI_H
#define NPB_MPI_H

#include <stdio.h>

#define MAX_PROCS 4

/* Whether `nprocs` ranks will do: a power of two up to MAX_PROCS, and `fits` (what else the
 * kernel needs of the count). Otherwise rank 0 says so. */
static inline int npb_mpi_ranks_ok(const char *kernel, int me, int nprocs, int fits) {
    if (nprocs >= 1 && nprocs <= MAX_PROCS && (nprocs & (nprocs - 1)) == 0 && fits)
        return 1;
    if (me == 0)
        fprintf(stderr,
                "%s (MPI): the number of processes must be 1, 2 or 4 "
                "(a power of two up to %d), got %d\n",
                kernel, MAX_PROCS, nprocs);
    return 0;
}

#endif
