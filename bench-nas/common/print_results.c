/* NPB-style result report. */
#include "npb-C.h"
#include <stdio.h>

/* Number of MPI processes, set by the MPI kernels (bench-nas/mpi/) before
 * they call print_results; 0 (the serial programs) prints no such line. */
int npb_nprocs = 0;

void print_results(const char *name, char class_, int n1, int n2, int n3, int niter, double t,
                   double mops, const char *optype, logical verified) {
    printf("\n\n %s Benchmark Completed.\n", name);
    printf(" Class           =             %12c\n", class_);
    if (n3 == 0) {
        long nn = n1;
        if (n2 != 0)
            nn *= n2;
        printf(" Size            =             %12ld\n", nn);
    } else {
        printf(" Size            =           %4dx%4dx%4d\n", n1, n2, n3);
    }
    printf(" Iterations      =             %12d\n", niter);
    if (npb_nprocs > 0)
        printf(" Processes       =             %12d\n", npb_nprocs);
    printf(" Time in seconds =             %12.2f\n", t);
    printf(" Mop/s total     =          %15.2f\n", mops);
    printf(" Operation type  = %24s\n", optype);
    if (verified)
        printf(" Verification    =               SUCCESSFUL\n");
    else
        printf(" Verification    =             UNSUCCESSFUL\n");
    printf(" Version         =                bench-nas\n");
    printf(" Language        =                        C\n");
    printf("\n");
    fflush(stdout);
}
