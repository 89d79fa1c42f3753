/* A long run must not grow (issue 16): rank 0 sends N small messages
 * (default 10^6) to rank 1, which checks at two checkpoints, after 10^4
 * messages and after N, that
 *   (a) its resident memory (VmRSS, /proc/self/status) grew by less than
 *       RSS_BOUND between the checkpoints (on both ranks), and
 *   (b) the checker's pending state stays bounded (sampled at the end of
 *       each group of GROUP messages and with each window of nonblocking
 *       calls posted): the companions a rank still holds (in flight) and
 *       the receives queued and not checked yet
 *       (mpix_check_p2p_pending, looked up with dlsym: without the checker,
 *       or with its point-to-point checks off, (b) is skipped).
 * The messages come in blocks of BLOCK, each block a way of sending and
 * receiving (cycling): MPI_Send of 2 x MPI_INT / MPI_Recv of 1 x a
 * contiguous(2, MPI_INT) with its tag; MPI_Isend + MPI_Wait of 1 x MPI_DOUBLE
 * / MPI_Recv with MPI_ANY_TAG; a window of BLOCK MPI_Isend / BLOCK
 * MPI_Irecv (every other one with MPI_ANY_TAG), MPI_Waitall both; MPI_Send
 * of 4 x MPI_BYTE / MPI_Irecv + MPI_Wait. Rank 1 acknowledges each group
 * (a 0-byte message), so neither MPI nor the checker holds more than a
 * group of unexpected messages. A correct program: with MPIX_CHECK_P2P=1
 * no report. Prints "p2p-long: ..." lines with the numbers; on a failed
 * bound a "FAIL" line and exit status 1. Exactly 2 ranks.
 * Usage: p2p_long [N] */
#define _GNU_SOURCE
/* gcc misreads MPICH's MPI_STATUSES_IGNORE as a zero-length array. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 50
#define GROUP 500 /* 10 blocks */
#define FIRST 10000
#ifndef RSS_BOUND /* -D to see the test fail */
#define RSS_BOUND (8L << 20)
#endif
#ifndef IN_FLIGHT_BOUND
#define IN_FLIGHT_BOUND 256
#endif
#ifndef QUEUED_BOUND
#define QUEUED_BOUND (2 * BLOCK)
#endif
/* With MPIX_CHECK_VERIFY=batched the companions travel in batches of 64:
 * up to a batch of completed receives waits for its batch. */
#define BATCH 64

typedef int (*pending_fn)(int64_t *, int64_t *);

static long rss_bytes(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kb = strtol(line + 6, NULL, 10);
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

static void sample(pending_fn pending, int64_t *max_flight, int64_t *max_queued) {
    int64_t f, q;
    pending(&f, &q);
    if (f > *max_flight) *max_flight = f;
    if (q > *max_queued) *max_queued = q;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "p2p_long: needs exactly 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    n = (n + GROUP - 1) / GROUP * GROUP;
    if (n < FIRST) n = FIRST;
    pending_fn pending = (pending_fn)dlsym(RTLD_DEFAULT, "mpix_check_p2p_pending");
    int64_t f0 = 0, q0 = 0;
    int counting = pending && pending(&f0, &q0) == 0;
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    int ints[2 * BLOCK], in[2 * BLOCK];
    double dbl[BLOCK], din[BLOCK];
    char bytes[4 * BLOCK], bin[4 * BLOCK];
    MPI_Request req[BLOCK];
    for (int i = 0; i < 2 * BLOCK; i++) ints[i] = i;
    for (int i = 0; i < BLOCK; i++) dbl[i] = i / 2.0;
    memset(bytes, 7, sizeof bytes);
    long sum = 0, rss_first = 0, rss_last = 0;
    int64_t max_flight = 0, max_queued = 0;
    double t0 = MPI_Wtime();
    for (long m = 0; m < n; m += BLOCK) {
        long b = m / BLOCK;
        int tag = (int)(b % 5);
        switch (b % 4) {
        case 0:
            for (int i = 0; i < BLOCK; i++) {
                if (rank == 0) MPI_Send(ints + 2 * i, 2, MPI_INT, 1, tag, MPI_COMM_WORLD);
                else {
                    MPI_Recv(in + 2 * i, 1, pair, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    sum += in[2 * i + 1];
                }
            }
            break;
        case 1:
            for (int i = 0; i < BLOCK; i++) {
                if (rank == 0) {
                    MPI_Isend(dbl + i, 1, MPI_DOUBLE, 1, tag, MPI_COMM_WORLD, &req[0]);
                    MPI_Wait(&req[0], MPI_STATUS_IGNORE);
                } else {
                    MPI_Status st;
                    MPI_Recv(din + i, 1, MPI_DOUBLE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                    sum += st.MPI_TAG + (long)(2 * din[i]);
                }
            }
            break;
        case 2:
            for (int i = 0; i < BLOCK; i++) {
                if (rank == 0) MPI_Isend(ints + 2 * i, 2, MPI_INT, 1, tag, MPI_COMM_WORLD, &req[i]);
                else MPI_Irecv(in + 2 * i, 2, MPI_INT, 0, i % 2 ? MPI_ANY_TAG : tag, MPI_COMM_WORLD, &req[i]);
            }
            if (counting) sample(pending, &max_flight, &max_queued); /* the window posted */
            MPI_Waitall(BLOCK, req, MPI_STATUSES_IGNORE);
            if (rank == 1)
                for (int i = 0; i < BLOCK; i++) sum += in[2 * i];
            break;
        default:
            for (int i = 0; i < BLOCK; i++) {
                if (rank == 0) MPI_Send(bytes + 4 * i, 4, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
                else {
                    MPI_Irecv(bin + 4 * i, 4, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &req[0]);
                    MPI_Wait(&req[0], MPI_STATUS_IGNORE);
                    sum += bin[4 * i + 3];
                }
            }
        }
        long done = m + BLOCK;
        if (done % GROUP) continue;
        /* the group's acknowledgement */
        if (rank == 0) MPI_Recv(NULL, 0, MPI_BYTE, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else MPI_Send(NULL, 0, MPI_BYTE, 0, 99, MPI_COMM_WORLD);
        if (counting) sample(pending, &max_flight, &max_queued);
        if (done == FIRST) rss_first = rss_bytes();
        if (done == n) rss_last = rss_bytes();
    }
    double dt = MPI_Wtime() - t0;
    long grew = rss_last - rss_first;
    int bad = rss_first <= 0 || grew >= RSS_BOUND;
    const char *verify = getenv("MPIX_CHECK_VERIFY");
    long queued_bound = QUEUED_BOUND + (verify && !strcmp(verify, "batched") ? BATCH : 0);
    if (counting && (max_flight > IN_FLIGHT_BOUND || max_queued > queued_bound)) bad = 1;
    /* rank 0 prints both ranks' numbers, in order */
    long mine[5] = {grew, rss_last, (long)max_flight, (long)max_queued, bad};
    long all[10];
    MPI_Gather(mine, 5, MPI_LONG, all, 5, MPI_LONG, 0, MPI_COMM_WORLD);
    long sums[2] = {0, sum}, got[2];
    MPI_Reduce(sums, got, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int failed = 0;
    if (rank == 0) {
        printf("p2p-long: %ld messages in %.1f s (%.0f/s), checksum %ld\n", n, dt, n / dt, got[1]);
        for (int r = 0; r < 2; r++) {
            long *v = all + 5 * r;
            printf("%s rank %d: VmRSS grew %+ld KiB from message %d to %ld (bound %ld KiB; %ld KiB at the end)",
                   v[4] ? "FAIL p2p-long:" : "p2p-long:", r, v[0] / 1024, FIRST, n, RSS_BOUND / 1024,
                   v[1] / 1024);
            if (counting)
                printf("; at most %ld companions in flight (bound %d), %ld receives queued (bound %ld)", v[2],
                       IN_FLIGHT_BOUND, v[3], queued_bound);
            else
                printf("; no checker counts (not preloaded, or MPIX_CHECK_P2P off)");
            printf("\n");
            failed |= v[4] != 0;
        }
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Type_free(&pair);
    MPI_Finalize();
    return failed;
}
