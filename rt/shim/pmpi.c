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
 * MPI_COMM_WORLD.
 *
 * With compensation on, the layer also piggybacks each rank's accumulated measurement overhead
 * (rt/src/piggyback.rs): every send is preceded by a one-word message on a shadow
 * communicator (a duplicate of MPI_COMM_WORLD, to the same world rank, with the same tag), and
 * every completed receive takes the matching word if it is there (MPI keeps messages between
 * two ranks with one tag in order, on each communicator). A receive never blocks on the
 * shadow: a message sent by code the layer does not see (Fortran bindings, MPI_Bsend,
 * persistent requests) has no overhead word, and its receiver simply inherits nothing. After
 * each collective, the ranks combine their overheads with one more collective of one word, in
 * the direction data flowed (all to all, root to all, all to root). */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern uint64_t __instrument_now(void);
extern void __instrument_mpi_rank(int rank, int size);
extern void __instrument_mpi_record(unsigned operation, int peer, uint64_t bytes, uint64_t start,
                                    uint64_t transfer, uint64_t end);
extern int __instrument_mpi_piggyback(void);
extern uint64_t __instrument_mpi_overhead(void);
extern void __instrument_mpi_inherit(uint64_t sender_ns, uint64_t wait_ticks);
extern void __instrument_mpi_piggyback_cost(uint64_t ticks);

/* enum operation, generated from instrument_contract::mpi::OPERATIONS by the wrappers. */
#include "instrument_operations.h"

enum { NO_PEER = -1 };

static uint64_t bytes_of(int count, MPI_Datatype type) {
    int size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS ||
        size < 0)
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
    if ((inter ? PMPI_Comm_remote_group(comm, &group) : PMPI_Comm_group(comm, &group)) !=
        MPI_SUCCESS)
        return NO_PEER;
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    PMPI_Group_translate_ranks(group, 1, &rank, world, &world_rank);
    PMPI_Group_free(&group);
    PMPI_Group_free(&world);
    return world_rank == MPI_UNDEFINED ? NO_PEER : world_rank;
}

/* ---- piggybacked overheads ---- */

static MPI_Comm shadow = MPI_COMM_NULL; /* set while piggybacking */

/* Overhead words in flight: an Isend's buffer must live until it completes, and the requests
 * are freed at once, so words are taken round a ring much larger than any backlog. */
enum { RING = 8192 };
static uint64_t ring[RING];
static unsigned ring_next;

/* Sends the overhead word ahead of a message to world rank `peer` (NO_PEER: none). */
static void piggyback_send(int peer, int tag) {
    if (shadow == MPI_COMM_NULL || peer < 0)
        return;
    uint64_t start = __instrument_now();
    uint64_t *word = &ring[__atomic_fetch_add(&ring_next, 1, __ATOMIC_RELAXED) % RING];
    *word = __instrument_mpi_overhead();
    MPI_Request request;
    if (PMPI_Isend(word, 1, MPI_UINT64_T, peer, tag, shadow, &request) == MPI_SUCCESS)
        PMPI_Request_free(&request);
    __instrument_mpi_piggyback_cost(__instrument_now() - start);
}

/* The overhead word that came with a message from world rank `peer` with `tag`, if it is
 * there. */
static int piggyback_take(int peer, int tag, uint64_t *sender) {
    if (shadow == MPI_COMM_NULL || peer < 0)
        return 0;
    uint64_t start = __instrument_now();
    int flag = 0;
    for (int tries = 0; !flag && tries < 64; tries++)
        PMPI_Iprobe(peer, tag, shadow, &flag, MPI_STATUS_IGNORE);
    if (flag)
        flag =
            PMPI_Recv(sender, 1, MPI_UINT64_T, peer, tag, shadow, MPI_STATUS_IGNORE) == MPI_SUCCESS;
    __instrument_mpi_piggyback_cost(__instrument_now() - start);
    return flag;
}

static void piggyback_from(int peer, int tag, uint64_t wait) {
    uint64_t sender = 0;
    if (piggyback_take(peer, tag, &sender))
        __instrument_mpi_inherit(sender, wait);
}

/* Takes the overhead of the message `status` describes, received on `comm`. */
static void piggyback_receive(MPI_Comm comm, const MPI_Status *status, uint64_t wait) {
    if (shadow != MPI_COMM_NULL)
        piggyback_from(world_peer(comm, status->MPI_SOURCE), status->MPI_TAG, wait);
}

/* Which way a collective's data flows, for combining overheads after it. */
enum flow { ALL_TO_ALL, ROOT_TO_ALL, ALL_TO_ROOT };

static void piggyback_collective(MPI_Comm comm, enum flow flow, int root, uint64_t start) {
    int inter = 0;
    if (shadow == MPI_COMM_NULL || comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) ||
        inter)
        return;
    uint64_t begin = __instrument_now(), wait = begin - start;
    uint64_t own = __instrument_mpi_overhead(), max = own;
    int rank = 0, ok;
    PMPI_Comm_rank(comm, &rank);
    if (flow == ALL_TO_ALL)
        ok = PMPI_Allreduce(&own, &max, 1, MPI_UINT64_T, MPI_MAX, comm) == MPI_SUCCESS;
    else if (flow == ROOT_TO_ALL)
        ok = PMPI_Bcast(&max, 1, MPI_UINT64_T, root, comm) == MPI_SUCCESS && rank != root;
    else
        ok = PMPI_Reduce(&own, &max, 1, MPI_UINT64_T, MPI_MAX, root, comm) == MPI_SUCCESS &&
             rank == root;
    __instrument_mpi_piggyback_cost(__instrument_now() - begin);
    if (ok)
        __instrument_mpi_inherit(max, wait);
}

/* Receive requests in flight (MPI_Irecv), to find their communicator when they complete. */
enum { TRACKED = 256 };
static struct {
    MPI_Request request;
    MPI_Comm comm;
} receives[TRACKED];
static int receives_used;
static char receives_lock;

static void lock(void) {
    while (__atomic_test_and_set(&receives_lock, __ATOMIC_ACQUIRE))
        ;
}

static void unlock(void) { __atomic_clear(&receives_lock, __ATOMIC_RELEASE); }

/* A request completed by a call the layer does not see (MPI_Testall, MPI_Request_free...)
 * stays in the table; when MPI hands out the same handle again, the entry is replaced (a
 * receive) or dropped (a send: `forget_receive` after MPI_Isend). */
static void track_receive(MPI_Request request, MPI_Comm comm) {
    if (shadow == MPI_COMM_NULL || request == MPI_REQUEST_NULL)
        return;
    lock();
    for (int i = 0; i < receives_used; i++)
        if (receives[i].request == request)
            receives[i] = receives[--receives_used];
    if (receives_used < TRACKED) {
        receives[receives_used].request = request;
        receives[receives_used++].comm = comm;
    }
    unlock();
}

/* The communicator of a tracked receive request, which is forgotten (MPI_COMM_NULL if none). */
static MPI_Comm forget_receive(MPI_Request request) {
    MPI_Comm comm = MPI_COMM_NULL;
    if (shadow == MPI_COMM_NULL || request == MPI_REQUEST_NULL)
        return comm;
    lock();
    for (int i = 0; i < receives_used; i++)
        if (receives[i].request == request) {
            comm = receives[i].comm;
            receives[i] = receives[--receives_used];
            break;
        }
    unlock();
    return comm;
}

static void start_piggyback(void) {
    if (__instrument_mpi_piggyback() && PMPI_Comm_dup(MPI_COMM_WORLD, &shadow) != MPI_SUCCESS)
        shadow = MPI_COMM_NULL;
}

/* Takes the overhead words nobody received, then frees the shadow communicator. */
static void stop_piggyback(void) {
    if (shadow == MPI_COMM_NULL)
        return;
    PMPI_Barrier(shadow);
    int flag = 1;
    while (flag) {
        MPI_Status status;
        uint64_t word;
        PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, shadow, &flag, &status);
        if (flag)
            PMPI_Recv(&word, 1, MPI_UINT64_T, status.MPI_SOURCE, status.MPI_TAG, shadow,
                      MPI_STATUS_IGNORE);
    }
    PMPI_Comm_free(&shadow);
    shadow = MPI_COMM_NULL;
}

/* ---- the MPI calls ---- */

static void record_rank(void) {
    int initialized = 0, rank = 0, size = 0;
    PMPI_Initialized(&initialized);
    if (initialized && PMPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS &&
        PMPI_Comm_size(MPI_COMM_WORLD, &size) == MPI_SUCCESS)
        __instrument_mpi_rank(rank, size);
}

/* MPI_Init and MPI_Finalize are recorded too: they hold the launcher's start-up and
 * tear-down, which the experiment runner leaves out of main's time. */
static int initialized(uint64_t start, int result) {
    record_rank();
    start_piggyback();
    __instrument_mpi_record(INIT, NO_PEER, 0, start, start, __instrument_now());
    return result;
}

int MPI_Init(int *argc, char ***argv) {
    uint64_t start = __instrument_now();
    return initialized(start, PMPI_Init(argc, argv));
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    uint64_t start = __instrument_now();
    return initialized(start, PMPI_Init_thread(argc, argv, required, provided));
}

int MPI_Finalize(void) {
    uint64_t start = __instrument_now();
    stop_piggyback();
    int result = PMPI_Finalize();
    __instrument_mpi_record(FINALIZE, NO_PEER, 0, start, start, __instrument_now());
    return result;
}

/* Records a point-to-point call with world rank `peer`. */
static int point_to_point(enum operation op, int peer, uint64_t bytes, uint64_t start, int result) {
    uint64_t end = __instrument_now();
    __instrument_mpi_record(op, peer, bytes, start, start, end);
    return result;
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    int peer = world_peer(comm, dest);
    piggyback_send(peer, tag);
    uint64_t start = __instrument_now();
    int result = PMPI_Send(buf, count, type, dest, tag, comm);
    return point_to_point(SEND, peer, bytes_of(count, type), start, result);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    int peer = world_peer(comm, dest);
    piggyback_send(peer, tag);
    uint64_t start = __instrument_now();
    int result = PMPI_Ssend(buf, count, type, dest, tag, comm);
    return point_to_point(SSEND, peer, bytes_of(count, type), start, result);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request) {
    int peer = world_peer(comm, dest);
    piggyback_send(peer, tag);
    uint64_t start = __instrument_now();
    int result = PMPI_Isend(buf, count, type, dest, tag, comm, request);
    if (result == MPI_SUCCESS)
        forget_receive(*request);
    return point_to_point(ISEND, peer, bytes_of(count, type), start, result);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request) {
    uint64_t start = __instrument_now();
    int result = PMPI_Irecv(buf, count, type, source, tag, comm, request);
    if (result == MPI_SUCCESS)
        track_receive(*request, comm);
    return point_to_point(IRECV, world_peer(comm, source), bytes_of(count, type), start, result);
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
    int from = world_peer(comm, st->MPI_SOURCE);
    __instrument_mpi_record(RECV, from, bytes_of(received, type), start, transfer, end);
    if (result == MPI_SUCCESS)
        piggyback_from(from, st->MPI_TAG, transfer - start);
    return result;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status) {
    int peer = world_peer(comm, dest);
    piggyback_send(peer, sendtag);
    uint64_t start = __instrument_now();
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int result = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                               recvtype, source, recvtag, comm, st);
    point_to_point(SENDRECV, peer, bytes_of(sendcount, sendtype), start, result);
    if (result == MPI_SUCCESS)
        piggyback_receive(comm, st, __instrument_now() - start);
    return result;
}

static int waited(enum operation op, uint64_t start, int result) {
    uint64_t end = __instrument_now();
    __instrument_mpi_record(op, NO_PEER, 0, start, end, end);
    return result;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status) {
    uint64_t start = __instrument_now();
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    MPI_Comm comm = forget_receive(*request);
    int result = waited(WAIT, start, PMPI_Wait(request, st));
    if (result == MPI_SUCCESS && comm != MPI_COMM_NULL)
        piggyback_receive(comm, st, __instrument_now() - start);
    return result;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    MPI_Request before = *request;
    int result = PMPI_Test(request, flag, st);
    if (result == MPI_SUCCESS && *flag) {
        /* A test does not know how long its caller has been waiting: the word is taken, to
         * keep the pairing, but nothing is inherited. */
        MPI_Comm comm = forget_receive(before);
        if (comm != MPI_COMM_NULL)
            piggyback_receive(comm, st, 0);
    }
    return result;
}

/* The requests of a Waitall that are tracked receives: their communicators, and statuses for
 * them when the caller ignores statuses. Small calls use the stack. */
enum { SMALL = 32 };

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    uint64_t start = __instrument_now();
    if (shadow == MPI_COMM_NULL || count <= 0)
        return waited(WAITALL, start, PMPI_Waitall(count, requests, statuses));
    MPI_Comm small_comms[SMALL];
    MPI_Status small_statuses[SMALL];
    int large = count > SMALL;
    MPI_Comm *comms = large ? malloc(sizeof(MPI_Comm) * (size_t)count) : small_comms;
    MPI_Status *st = statuses != MPI_STATUSES_IGNORE ? statuses
                     : large                         ? malloc(sizeof(MPI_Status) * (size_t)count)
                                                     : small_statuses;
    if (!comms || !st) {
        if (large)
            free(comms), free(st == statuses ? NULL : st);
        return waited(WAITALL, start, PMPI_Waitall(count, requests, statuses));
    }
    for (int i = 0; i < count; i++)
        comms[i] = forget_receive(requests[i]);
    int result = waited(WAITALL, start, PMPI_Waitall(count, requests, st));
    uint64_t wait = __instrument_now() - start, sender = 0, most = 0;
    int any = 0;
    for (int i = 0; result == MPI_SUCCESS && i < count; i++)
        if (comms[i] != MPI_COMM_NULL &&
            piggyback_take(world_peer(comms[i], st[i].MPI_SOURCE), st[i].MPI_TAG, &sender)) {
            most = sender > most ? sender : most;
            any = 1;
        }
    if (any)
        __instrument_mpi_inherit(most, wait);
    if (large) {
        free(comms);
        if (st != statuses)
            free(st);
    }
    return result;
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
    uint64_t start = __instrument_now();
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    MPI_Request small[SMALL];
    MPI_Request *before = shadow == MPI_COMM_NULL || count <= 0 ? NULL
                          : count > SMALL ? malloc(sizeof(MPI_Request) * (size_t)count)
                                          : small;
    if (before)
        memcpy(before, requests, sizeof(MPI_Request) * (size_t)count);
    int result = waited(WAITANY, start, PMPI_Waitany(count, requests, index, st));
    if (before && result == MPI_SUCCESS && *index != MPI_UNDEFINED) {
        MPI_Comm comm = forget_receive(before[*index]);
        if (comm != MPI_COMM_NULL)
            piggyback_receive(comm, st, __instrument_now() - start);
    }
    if (before != small)
        free(before);
    return result;
}

static int collective(enum operation op, MPI_Comm comm, enum flow flow, int root, uint64_t bytes,
                      uint64_t start, int result) {
    uint64_t end = __instrument_now();
    __instrument_mpi_record(op, root < 0 ? NO_PEER : world_peer(comm, root), bytes, start, start,
                            end);
    if (result == MPI_SUCCESS)
        piggyback_collective(comm, flow, root, start);
    return result;
}

int MPI_Barrier(MPI_Comm comm) {
    uint64_t start = __instrument_now();
    return collective(BARRIER, comm, ALL_TO_ALL, NO_PEER, 0, start, PMPI_Barrier(comm));
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    uint64_t start = __instrument_now();
    int result = PMPI_Bcast(buf, count, type, root, comm);
    return collective(BCAST, comm, ROOT_TO_ALL, root, bytes_of(count, type), start, result);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm) {
    uint64_t start = __instrument_now();
    int result = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    return collective(REDUCE, comm, ALL_TO_ROOT, root, bytes_of(count, type), start, result);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
    uint64_t start = __instrument_now();
    int result = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    return collective(ALLREDUCE, comm, ALL_TO_ALL, NO_PEER, bytes_of(count, type), start, result);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    uint64_t start = __instrument_now();
    int size = 0;
    PMPI_Comm_size(comm, &size);
    int result = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return collective(ALLTOALL, comm, ALL_TO_ALL, NO_PEER,
                      bytes_of(sendcount, sendtype) * (uint64_t)size, start, result);
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
    int result = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                rdispls, recvtype, comm);
    return collective(ALLTOALLV, comm, ALL_TO_ALL, NO_PEER, bytes, start, result);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    uint64_t start = __instrument_now();
    int result =
        PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    return collective(GATHER, comm, ALL_TO_ROOT, root, bytes_of(sendcount, sendtype), start,
                      result);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    uint64_t start = __instrument_now();
    int result = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return collective(ALLGATHER, comm, ALL_TO_ALL, NO_PEER, bytes_of(sendcount, sendtype), start,
                      result);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    uint64_t start = __instrument_now();
    int result =
        PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    return collective(SCATTER, comm, ROOT_TO_ALL, root, bytes_of(recvcount, recvtype), start,
                      result);
}

/* ---- Fortran (mpif.h) ----
 * Open MPI's Fortran bindings call PMPI_* directly, so the C functions above never see a
 * Fortran program's calls. These take the Fortran calls (flang's names: lower case with one
 * trailing underscore), convert the handles and go through the same C functions. The
 * Fortran MPI_IN_PLACE and MPI_BOTTOM are addresses of the MPI library's own common blocks
 * (Open MPI's and MPICH's names, weak so that either library links). Not covered: calls not
 * listed here (their Fortran bindings go straight to PMPI, unrecorded). */
extern int mpi_fortran_in_place_ __attribute__((weak));
extern int mpi_fortran_bottom_ __attribute__((weak));
extern int MPIR_F_MPI_IN_PLACE __attribute__((weak));
extern int MPIR_F_MPI_BOTTOM __attribute__((weak));

#ifdef MPI_F_STATUS_SIZE
enum { F_STATUS_SIZE = MPI_F_STATUS_SIZE };
#else
enum { F_STATUS_SIZE = sizeof(MPI_Status) / sizeof(MPI_Fint) };
#endif

static void *f_buffer(void *buffer) {
    if ((&mpi_fortran_in_place_ && buffer == &mpi_fortran_in_place_) ||
        (&MPIR_F_MPI_IN_PLACE && buffer == &MPIR_F_MPI_IN_PLACE))
        return MPI_IN_PLACE;
    if ((&mpi_fortran_bottom_ && buffer == &mpi_fortran_bottom_) ||
        (&MPIR_F_MPI_BOTTOM && buffer == &MPIR_F_MPI_BOTTOM))
        return MPI_BOTTOM;
    return buffer;
}

static void f_status(const MPI_Status *status, MPI_Fint *f) {
    if (f != MPI_F_STATUS_IGNORE)
        MPI_Status_c2f(status, f);
}

void mpi_init_(MPI_Fint *ierr) { *ierr = MPI_Init(NULL, NULL); }

void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) {
    int p = 0;
    *ierr = MPI_Init_thread(NULL, NULL, *required, &p);
    *provided = p;
}

void mpi_finalize_(MPI_Fint *ierr) { *ierr = MPI_Finalize(); }

void mpi_send_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag,
               MPI_Fint *comm, MPI_Fint *ierr) {
    *ierr = MPI_Send(f_buffer(buf), *count, MPI_Type_f2c(*type), *dest, *tag, MPI_Comm_f2c(*comm));
}

void mpi_ssend_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag,
                MPI_Fint *comm, MPI_Fint *ierr) {
    *ierr = MPI_Ssend(f_buffer(buf), *count, MPI_Type_f2c(*type), *dest, *tag, MPI_Comm_f2c(*comm));
}

void mpi_recv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *source, MPI_Fint *tag,
               MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr) {
    MPI_Status s;
    *ierr = MPI_Recv(f_buffer(buf), *count, MPI_Type_f2c(*type), *source, *tag, MPI_Comm_f2c(*comm),
                     &s);
    f_status(&s, status);
}

void mpi_isend_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag,
                MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr) {
    MPI_Request r;
    *ierr =
        MPI_Isend(f_buffer(buf), *count, MPI_Type_f2c(*type), *dest, *tag, MPI_Comm_f2c(*comm), &r);
    if (*ierr == MPI_SUCCESS)
        *request = MPI_Request_c2f(r);
}

void mpi_irecv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *source, MPI_Fint *tag,
                MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr) {
    MPI_Request r;
    *ierr = MPI_Irecv(f_buffer(buf), *count, MPI_Type_f2c(*type), *source, *tag,
                      MPI_Comm_f2c(*comm), &r);
    if (*ierr == MPI_SUCCESS)
        *request = MPI_Request_c2f(r);
}

void mpi_sendrecv_(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, MPI_Fint *dest,
                   MPI_Fint *sendtag, void *recvbuf, MPI_Fint *recvcount, MPI_Fint *recvtype,
                   MPI_Fint *source, MPI_Fint *recvtag, MPI_Fint *comm, MPI_Fint *status,
                   MPI_Fint *ierr) {
    MPI_Status s;
    *ierr = MPI_Sendrecv(f_buffer(sendbuf), *sendcount, MPI_Type_f2c(*sendtype), *dest, *sendtag,
                         f_buffer(recvbuf), *recvcount, MPI_Type_f2c(*recvtype), *source, *recvtag,
                         MPI_Comm_f2c(*comm), &s);
    f_status(&s, status);
}

void mpi_wait_(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr) {
    MPI_Request r = MPI_Request_f2c(*request);
    MPI_Status s;
    *ierr = MPI_Wait(&r, &s);
    if (*ierr == MPI_SUCCESS) {
        *request = MPI_Request_c2f(r);
        f_status(&s, status);
    }
}

void mpi_waitall_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr) {
    int n = *count > 0 ? *count : 0;
    MPI_Request *r = malloc(sizeof(MPI_Request) * (size_t)(n ? n : 1));
    MPI_Status *s = malloc(sizeof(MPI_Status) * (size_t)(n ? n : 1));
    if (!r || !s) {
        free(r), free(s);
        *ierr = MPI_ERR_NO_MEM;
        return;
    }
    for (int i = 0; i < n; i++)
        r[i] = MPI_Request_f2c(requests[i]);
    *ierr = MPI_Waitall(n, r, s);
    for (int i = 0; *ierr == MPI_SUCCESS && i < n; i++) {
        requests[i] = MPI_Request_c2f(r[i]);
        if (statuses != MPI_F_STATUSES_IGNORE)
            MPI_Status_c2f(&s[i], statuses + (size_t)i * F_STATUS_SIZE);
    }
    free(r);
    free(s);
}

void mpi_barrier_(MPI_Fint *comm, MPI_Fint *ierr) { *ierr = MPI_Barrier(MPI_Comm_f2c(*comm)); }

void mpi_bcast_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root, MPI_Fint *comm,
                MPI_Fint *ierr) {
    *ierr = MPI_Bcast(f_buffer(buf), *count, MPI_Type_f2c(*type), *root, MPI_Comm_f2c(*comm));
}

void mpi_reduce_(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,
                 MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr) {
    *ierr = MPI_Reduce(f_buffer(sendbuf), f_buffer(recvbuf), *count, MPI_Type_f2c(*type),
                       MPI_Op_f2c(*op), *root, MPI_Comm_f2c(*comm));
}

void mpi_allreduce_(void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,
                    MPI_Fint *comm, MPI_Fint *ierr) {
    *ierr = MPI_Allreduce(f_buffer(sendbuf), f_buffer(recvbuf), *count, MPI_Type_f2c(*type),
                          MPI_Op_f2c(*op), MPI_Comm_f2c(*comm));
}

void mpi_alltoall_(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,
                   MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *comm, MPI_Fint *ierr) {
    *ierr = MPI_Alltoall(f_buffer(sendbuf), *sendcount, MPI_Type_f2c(*sendtype), f_buffer(recvbuf),
                         *recvcount, MPI_Type_f2c(*recvtype), MPI_Comm_f2c(*comm));
}

void mpi_gather_(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,
                 MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *comm,
                 MPI_Fint *ierr) {
    *ierr = MPI_Gather(f_buffer(sendbuf), *sendcount, MPI_Type_f2c(*sendtype), f_buffer(recvbuf),
                       *recvcount, MPI_Type_f2c(*recvtype), *root, MPI_Comm_f2c(*comm));
}

void mpi_allgather_(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,
                    MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *comm, MPI_Fint *ierr) {
    *ierr = MPI_Allgather(f_buffer(sendbuf), *sendcount, MPI_Type_f2c(*sendtype), f_buffer(recvbuf),
                          *recvcount, MPI_Type_f2c(*recvtype), MPI_Comm_f2c(*comm));
}

void mpi_scatter_(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,
                  MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *comm,
                  MPI_Fint *ierr) {
    *ierr = MPI_Scatter(f_buffer(sendbuf), *sendcount, MPI_Type_f2c(*sendtype), f_buffer(recvbuf),
                        *recvcount, MPI_Type_f2c(*recvtype), *root, MPI_Comm_f2c(*comm));
}
