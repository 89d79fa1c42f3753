/* Point-to-point traffic from several threads at once (issue 29, item 5:
 * the checks at MPI_THREAD_MULTIPLE). Each rank runs THREADS threads that
 * all talk to both ring neighbours on MPI_COMM_WORLD at the same time:
 * per-thread tags (nonblocking send with a blocking receive, a derived
 * type received as its basic elements, a matched probe, MPI_Sendrecv,
 * a persistent pair) and one tag that every thread shares (the same
 * type: any thread may take any message, so the results are sums).
 *
 *   p2p_threads            correct: with the checker (point-to-point
 *                          checks on by default) no report and the same
 *                          "p2p-threads:" lines as without it
 *                          (scripts/check-p2p-tests.sh)
 *   p2p_threads mismatch   the same traffic, then thread 1 of the last
 *                          rank receives rank 0's MPI_INT on tag 99 as
 *                          MPI_FLOAT: reported
 *
 * Any number of ranks >= 2. An MPI without MPI_THREAD_MULTIPLE prints a
 * line saying so (the suite fails on it). */
/* gcc misreads MPICH's MPI_STATUSES_IGNORE as a zero-length array. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { THREADS = 3, ROUNDS = 40 };

static int rank, size, right, left, mismatch;
static MPI_Datatype every_other; /* 2 ints, stride 2: shared by the threads */
static long total = 0;
static pthread_mutex_t total_lock = PTHREAD_MUTEX_INITIALIZER;

static void add(long v) {
    pthread_mutex_lock(&total_lock);
    total = (total + v) % 1000000007L; /* threads end in any order */
    pthread_mutex_unlock(&total_lock);
}

/* Sums commute: for the shared tag, whose messages any thread may take. */
static long shared_sum = 0;

static void *traffic(void *arg) {
    int t = (int)(long)arg;
    int out[8], in[8];
    double dout[2], din[2];
    long local = 0;
    MPI_Status st;
    MPI_Request r[2];
    for (int i = 0; i < ROUNDS; i++) {
        for (int k = 0; k < 8; k++) out[k] = rank * 1000 + t * 100 + i + k;
        /* Own tag: 1 to 4 ints, a nonblocking send, a blocking receive. */
        int n = 1 + i % 4, got;
        MPI_Isend(out, n, MPI_INT, right, 10 + t, MPI_COMM_WORLD, &r[0]);
        MPI_Recv(in, 4, MPI_INT, left, 10 + t, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &got);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        for (int k = 0; k < got; k++) local = (local * 7 + in[k]) % 1000000007L;
        /* The shared tag: 2 doubles from every thread of the left rank. */
        dout[0] = rank * 1000 + t * 100 + i;
        dout[1] = 0.5;
        MPI_Isend(dout, 2, MPI_DOUBLE, right, 5, MPI_COMM_WORLD, &r[0]);
        MPI_Recv(din, 2, MPI_DOUBLE, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        pthread_mutex_lock(&total_lock);
        shared_sum += (long)din[0];
        pthread_mutex_unlock(&total_lock);
        /* A derived type received as its basic elements. */
        MPI_Irecv(in, 2, MPI_INT, left, 20 + t, MPI_COMM_WORLD, &r[1]);
        MPI_Send(out, 1, every_other, right, 20 + t, MPI_COMM_WORLD);
        MPI_Wait(&r[1], MPI_STATUS_IGNORE);
        local = (local * 7 + in[0] + in[1]) % 1000000007L;
        /* A matched probe. */
        MPI_Message m;
        MPI_Isend(out, 3, MPI_INT, right, 30 + t, MPI_COMM_WORLD, &r[0]);
        MPI_Mprobe(left, 30 + t, MPI_COMM_WORLD, &m, &st);
        MPI_Mrecv(in, 3, MPI_INT, &m, MPI_STATUS_IGNORE);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        local = (local * 7 + in[2]) % 1000000007L;
        /* MPI_Sendrecv and a persistent pair. */
        MPI_Sendrecv(out, 2, MPI_INT, right, 40 + t, in, 2, MPI_INT, left, 40 + t, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        local = (local * 7 + in[1]) % 1000000007L;
        if (i % 10 == 0) {
            MPI_Send_init(out, 1, MPI_INT, right, 50 + t, MPI_COMM_WORLD, &r[0]);
            MPI_Recv_init(in, 1, MPI_INT, left, 50 + t, MPI_COMM_WORLD, &r[1]);
            MPI_Startall(2, r);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            MPI_Request_free(&r[0]);
            MPI_Request_free(&r[1]);
            local = (local * 7 + in[0]) % 1000000007L;
        }
    }
    if (mismatch && t == 1) {
        float f;
        if (rank == 0) MPI_Send(out, 1, MPI_INT, size - 1, 99, MPI_COMM_WORLD);
        if (rank == size - 1) MPI_Recv(&f, 1, MPI_FLOAT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    add(local);
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mismatch = argc > 1 && !strcmp(argv[1], "mismatch");
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0) printf("p2p-threads: the MPI provides thread level %d only\n", provided);
        MPI_Finalize();
        return 0;
    }
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    MPI_Type_vector(2, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, traffic, (void *)t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    MPI_Type_free(&every_other);
    /* Per-thread results combine in any order: sum them over the ranks. */
    long mine[2] = {total, shared_sum}, all[2];
    MPI_Reduce(mine, all, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("p2p-threads: %d threads a rank, %d rounds\n", THREADS, ROUNDS);
        printf("p2p-threads: checksum %ld %ld\n", all[0], all[1]);
    }
    MPI_Finalize();
    return 0;
}
