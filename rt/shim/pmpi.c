/* The PMPI layer: MPI calls timed at the MPI profiling interface, one COM record (Li and Zhang)
 * per communication statement, operation and peer, kept by the runtime (rt/src/mpi.rs).
 *
 * It is compiled by the compiler wrappers against the program's own mpi.h whenever an
 * executable is linked with MPI, and linked as an object, so its MPI_* definitions come before
 * the MPI library's and forward to PMPI_*. It is never instrumented.
 *
 * A blocking receive first waits for its message with a matched probe (MPI_Improbe), then
 * receives exactly that message (MPI_Mrecv): the time before the probe matched is the
 * synchronisation delay (the sender was late), the rest is transmission. Waits on requests
 * are all synchronisation delay. Collectives are timed whole. Peers are ranks in
 * MPI_COMM_WORLD. */
#include <mpi.h>
#include <stdint.h>

extern uint64_t __instrument_now(void);
extern void __instrument_mpi_rank(int rank, int size);
extern void __instrument_mpi_record(unsigned operation, int peer, uint64_t bytes, uint64_t start,
                                    uint64_t transfer, uint64_t end);

/* The order of rt/src/mpi.rs OPERATIONS. */
enum operation {
    SEND, RECV, ISEND, IRECV, WAIT, WAITALL, SENDRECV, BARRIER, BCAST, REDUCE, ALLREDUCE,
    ALLTOALL, ALLTOALLV, GATHER, ALLGATHER, SCATTER, SSEND, WAITANY
};

enum { NO_PEER = -1 };

static uint64_t bytes_of(int count, MPI_Datatype type) {
    int size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS || size < 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

/* `rank` of `comm` as a rank of MPI_COMM_WORLD (NO_PEER for wildcards and MPI_PROC_NULL). */
static int world_peer(MPI_Comm comm, int rank) {
    if (rank < 0 || rank == MPI_PROC_NULL)
        return NO_PEER;
    if (comm == MPI_COMM_WORLD)
        return rank;
    int inter = 0, world_rank = NO_PEER;
    MPI_Group group, world;
    PMPI_Comm_test_inter(comm, &inter);
    if ((inter ? PMPI_Comm_remote_group(comm, &group) : PMPI_Comm_group(comm, &group)) != MPI_SUCCESS)
        return NO_PEER;
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    PMPI_Group_translate_ranks(group, 1, &rank, world, &world_rank);
    PMPI_Group_free(&group);
    PMPI_Group_free(&world);
    return world_rank == MPI_UNDEFINED ? NO_PEER : world_rank;
}

static void record_rank(void) {
    int initialized = 0, rank = 0, size = 0;
    PMPI_Initialized(&initialized);
    if (initialized && PMPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS &&
        PMPI_Comm_size(MPI_COMM_WORLD, &size) == MPI_SUCCESS)
        __instrument_mpi_rank(rank, size);
}

int MPI_Init(int *argc, char ***argv) {
    int result = PMPI_Init(argc, argv);
    record_rank();
    return result;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int result = PMPI_Init_thread(argc, argv, required, provided);
    record_rank();
    return result;
}

static int point_to_point(enum operation op, MPI_Comm comm, int peer, uint64_t bytes, uint64_t start,
                          int result) {
    uint64_t end = __instrument_now();
    __instrument_mpi_record(op, world_peer(comm, peer), bytes, start, start, end);
    return result;
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    uint64_t start = __instrument_now();
    int result = PMPI_Send(buf, count, type, dest, tag, comm);
    return point_to_point(SEND, comm, dest, bytes_of(count, type), start, result);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    uint64_t start = __instrument_now();
    int result = PMPI_Ssend(buf, count, type, dest, tag, comm);
    return point_to_point(SSEND, comm, dest, bytes_of(count, type), start, result);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request) {
    uint64_t start = __instrument_now();
    int result = PMPI_Isend(buf, count, type, dest, tag, comm, request);
    return point_to_point(ISEND, comm, dest, bytes_of(count, type), start, result);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request) {
    uint64_t start = __instrument_now();
    int result = PMPI_Irecv(buf, count, type, source, tag, comm, request);
    return point_to_point(IRECV, comm, source, bytes_of(count, type), start, result);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
    uint64_t start = __instrument_now();
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    MPI_Message message;
    int flag = 0, result;
    do
        result = PMPI_Improbe(source, tag, comm, &flag, &message, st);
    while (result == MPI_SUCCESS && !flag);
    uint64_t transfer = __instrument_now();
    if (result == MPI_SUCCESS)
        result = PMPI_Mrecv(buf, count, type, &message, st);
    else
        result = PMPI_Recv(buf, count, type, source, tag, comm, st);
    uint64_t end = __instrument_now();
    int received = 0;
    if (result == MPI_SUCCESS && PMPI_Get_count(st, type, &received) != MPI_SUCCESS)
        received = 0;
    __instrument_mpi_record(RECV, world_peer(comm, st->MPI_SOURCE), bytes_of(received, type), start,
                            transfer, end);
    return result;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status) {
    uint64_t start = __instrument_now();
    int result = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                               recvtype, source, recvtag, comm, status);
    return point_to_point(SENDRECV, comm, dest, bytes_of(sendcount, sendtype), start, result);
}

static int waited(enum operation op, uint64_t start, int result) {
    uint64_t end = __instrument_now();
    __instrument_mpi_record(op, NO_PEER, 0, start, end, end);
    return result;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status) {
    uint64_t start = __instrument_now();
    return waited(WAIT, start, PMPI_Wait(request, status));
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    uint64_t start = __instrument_now();
    return waited(WAITALL, start, PMPI_Waitall(count, requests, statuses));
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
    uint64_t start = __instrument_now();
    return waited(WAITANY, start, PMPI_Waitany(count, requests, index, status));
}

static int collective(enum operation op, MPI_Comm comm, int root, uint64_t bytes, uint64_t start,
                      int result) {
    uint64_t end = __instrument_now();
    __instrument_mpi_record(op, root < 0 ? NO_PEER : world_peer(comm, root), bytes, start, start, end);
    return result;
}

int MPI_Barrier(MPI_Comm comm) {
    uint64_t start = __instrument_now();
    return collective(BARRIER, comm, NO_PEER, 0, start, PMPI_Barrier(comm));
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    uint64_t start = __instrument_now();
    int result = PMPI_Bcast(buf, count, type, root, comm);
    return collective(BCAST, comm, root, bytes_of(count, type), start, result);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm) {
    uint64_t start = __instrument_now();
    int result = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    return collective(REDUCE, comm, root, bytes_of(count, type), start, result);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
    uint64_t start = __instrument_now();
    int result = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    return collective(ALLREDUCE, comm, NO_PEER, bytes_of(count, type), start, result);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    uint64_t start = __instrument_now();
    int size = 0;
    PMPI_Comm_size(comm, &size);
    int result = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return collective(ALLTOALL, comm, NO_PEER, bytes_of(sendcount, sendtype) * (uint64_t)size, start,
                      result);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
    uint64_t start = __instrument_now();
    int size = 0;
    uint64_t bytes = 0;
    PMPI_Comm_size(comm, &size);
    for (int i = 0; i < size; i++)
        bytes += bytes_of(sendcounts[i], sendtype);
    int result = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                recvtype, comm);
    return collective(ALLTOALLV, comm, NO_PEER, bytes, start, result);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    uint64_t start = __instrument_now();
    int result = PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    return collective(GATHER, comm, root, bytes_of(sendcount, sendtype), start, result);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    uint64_t start = __instrument_now();
    int result = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return collective(ALLGATHER, comm, NO_PEER, bytes_of(sendcount, sendtype), start, result);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    uint64_t start = __instrument_now();
    int result = PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    return collective(SCATTER, comm, root, bytes_of(recvcount, recvtype), start, result);
}
