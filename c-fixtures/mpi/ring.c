/* MPI fixture with a known communication structure, for any number of ranks N >= 2:
 *   - pass_token: a token goes round the ring 3 times (rank 0 starts each lap): every rank
 *     sends 3 ints to (rank+1)%N and receives 3 from (rank-1+N)%N, 3 times each, from
 *     pass_token; rank 0 first waits busily for ~20 ms, so the others' receives wait for it;
 *   - share: MPI_Allreduce of 4 doubles, called 5 times;
 *   - gather_results: MPI_Gather of one int to rank 0.
 * Rank 0 prints the ring's sum and the gathered total; the program exits 0. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static void busy_ms(int ms) {
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do
        clock_gettime(CLOCK_MONOTONIC, &now);
    while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
}

__attribute__((noinline)) int pass_token(int rank, int size, int lap) {
    int token[3] = {lap, 0, 0};
    int next = (rank + 1) % size, previous = (rank - 1 + size) % size;
    if (rank == 0) {
        busy_ms(20);
        MPI_Send(token, 3, MPI_INT, next, lap, MPI_COMM_WORLD);
        MPI_Recv(token, 3, MPI_INT, previous, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(token, 3, MPI_INT, previous, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token[1] += rank;
        MPI_Send(token, 3, MPI_INT, next, lap, MPI_COMM_WORLD);
    }
    return token[1];
}

__attribute__((noinline)) double share(int rank, int round) {
    double mine[4] = {rank, round, 1, 2}, all[4];
    MPI_Allreduce(mine, all, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return all[0] + all[1];
}

__attribute__((noinline)) int gather_results(int rank, int size, int value) {
    int all[64] = {0}, total = 0;
    MPI_Gather(&value, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; rank == 0 && i < size && i < 64; i++)
        total += all[i];
    return total;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int sum = 0;
    for (int lap = 0; lap < 3; lap++)
        sum += pass_token(rank, size, lap);
    double shared = 0;
    for (int round = 0; round < 5; round++)
        shared += share(rank, round);
    int total = gather_results(rank, size, rank + 1);
    if (rank == 0)
        printf("ring sum %d, shared %.1f, gathered %d\n", sum, shared, total);
    MPI_Finalize();
    return 0;
}
