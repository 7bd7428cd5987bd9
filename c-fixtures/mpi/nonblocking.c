/* MPI fixture for the nonblocking receive paths of piggybacked compensation (2 ranks): rank 1
 * does heavily instrumented work (many tiny routine calls) and then sends one int to rank 0,
 * three times; rank 0 posts an MPI_Irecv each time and completes it with MPI_Waitall (with
 * MPI_STATUSES_IGNORE), MPI_Waitany and an MPI_Test loop. Every message it waited for
 * carries rank 1's growing overhead. Rank 1 starts each round's work when rank 0 says it has
 * posted its receive (an empty message), so rank 0 waits for all of it however the two ranks
 * were scheduled before (on a loaded machine rank 0 once came late to the first round, waited
 * little, and inherited 42 % of the overhead). Rank 0 prints the sum of the three values. */
#include <mpi.h>
#include <stdio.h>

/* The tags of rank 0's go-ahead messages, one a round. */
enum { READY = 100 };

__attribute__((noinline)) double tiny(double x) {
    for (int i = 0; i < 50; i++)
        x = x * 0.999999 + 1e-7;
    return x;
}

__attribute__((noinline)) int produce(int round) {
    double x = 1.0;
    for (int i = 0; i < 40000; i++)
        x = tiny(x);
    return round * 10 + (x > 0.0);
}

__attribute__((noinline)) int receive(int round) {
    int value = 0, index = -1, done = 0;
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Irecv(&value, 1, MPI_INT, 1, round, MPI_COMM_WORLD, &requests[0]);
    MPI_Send(NULL, 0, MPI_INT, 1, READY + round, MPI_COMM_WORLD);
    if (round == 0) {
        MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    } else if (round == 1) {
        MPI_Waitany(2, requests, &index, MPI_STATUS_IGNORE);
    } else {
        while (!done)
            MPI_Test(&requests[0], &done, MPI_STATUS_IGNORE);
    }
    return value;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, sum = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int round = 0; round < 3 && size == 2; round++) {
        if (rank == 1) {
            MPI_Recv(NULL, 0, MPI_INT, 0, READY + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int value = produce(round);
            MPI_Send(&value, 1, MPI_INT, 0, round, MPI_COMM_WORLD);
        } else {
            sum += receive(round);
        }
    }
    if (rank == 0)
        printf("sum = %d\n", sum);
    MPI_Finalize();
    return size == 2 ? 0 : 2;
}
