/* MPI fixture for compensation across processes (Malony and Shende, section 5, Figure 1): a
 * master (rank 0) hands out tasks and waits for their results; the workers (every other
 * rank) do the work in many tiny routine calls, so with every routine instrumented they are
 * heavily intruded on while the master, with a handful of events, barely is. The master's
 * time is the workers' time, overhead included, unless it learns their overhead.
 *
 * Usage: master_worker [tasks] [calls per task]   (default 40 tasks of 60000 calls)
 * Needs at least 2 ranks. Rank 0 prints the tasks' checksum (independent of which worker did
 * which task) and exits 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { TASK = 1, RESULT = 2, STOP = 3 };

/* About 100 dependent multiply-adds: a tiny routine, called very often. */
__attribute__((noinline)) double tiny(double x) {
    for (int i = 0; i < 100; i++)
        x = x * 0.999999 + 1e-7;
    return x;
}

__attribute__((noinline)) double work(int task, long calls) {
    double x = 1.0 + task * 1e-3, sum = 0.0;
    for (long i = 0; i < calls; i++) {
        x = tiny(x);
        sum += x;
    }
    return sum / (double)calls;
}

__attribute__((noinline)) void worker(long calls) {
    for (;;) {
        int task;
        MPI_Status status;
        MPI_Recv(&task, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        if (status.MPI_TAG == STOP)
            return;
        double result[2] = {task, work(task, calls)};
        MPI_Send(result, 2, MPI_DOUBLE, 0, RESULT, MPI_COMM_WORLD);
    }
}

__attribute__((noinline)) double master(int size, int tasks) {
    int next = 0, outstanding = 0;
    double checksum = 0.0;
    for (int w = 1; w < size; w++) {
        int tag = next < tasks ? TASK : STOP;
        MPI_Send(&next, 1, MPI_INT, w, tag, MPI_COMM_WORLD);
        if (tag == TASK)
            next++, outstanding++;
    }
    while (outstanding > 0) {
        double result[2];
        MPI_Status status;
        MPI_Recv(result, 2, MPI_DOUBLE, MPI_ANY_SOURCE, RESULT, MPI_COMM_WORLD, &status);
        outstanding--;
        checksum += result[1] * (1.0 + result[0]);
        int tag = next < tasks ? TASK : STOP;
        MPI_Send(&next, 1, MPI_INT, status.MPI_SOURCE, tag, MPI_COMM_WORLD);
        if (tag == TASK)
            next++, outstanding++;
    }
    return checksum;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int tasks = argc > 1 ? atoi(argv[1]) : 40;
    long calls = argc > 2 ? atol(argv[2]) : 60000;
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "master_worker needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    if (rank == 0)
        printf("checksum = %.9f\n", master(size, tasks));
    else
        worker(calls);
    MPI_Finalize();
    return 0;
}
