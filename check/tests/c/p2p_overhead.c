/* The point-to-point checker's overhead (issue 16; a benchmark, not a
 * test): run it with and without LD_PRELOAD=libmpix_check.so
 * MPIX_CHECK_P2P=1 (scripts/check-p2p-bench.sh does both, alternately).
 *
 * Ping-pong between ranks 0 and 1 (other ranks idle) for 1 B to 4 MiB,
 * with two datatypes of the same total size:
 *   byte     SIZE x MPI_BYTE (contiguous);
 *   vector   1 x MPI_Type_vector(SIZE/8/B, B, 2*B, MPI_DOUBLE), B =
 *            min(SIZE/8, 8): blocks of up to 8 doubles (64 B), every other
 *            block of a buffer twice the size (strided; MPI packs it); for
 *            1 B, 1 x MPI_Type_contiguous(1, MPI_CHAR).
 * Each (size, type) runs a warm-up that also sets ITERS (rank 0 times it:
 * a repetition takes about 5 ms, 3 to 20000 round trips), then REPS
 * timed repetitions of ITERS round trips; printed: the median and the
 * best (least) over the repetitions of the round trip / 2 (the one-way
 * latency, us), and SIZE / the median latency (MB/s, 10^6 bytes/s). On a
 * shared machine, the best repetition is the one least disturbed.
 *
 * Then "huge": one MPI_INT each way, received with 1 x a vector of 10^9
 * ints (a legal prefix: the check hashes the first element of a
 * 10^9-element type).
 *
 * Message rate: rank 0 posts a window of 64 MPI_Isend of 8 x MPI_BYTE,
 * rank 1 a window of 64 MPI_Irecv, both MPI_Waitall, rank 1 acks with a
 * 0-byte message; printed: the median and the best over REPS repetitions
 * of 100 windows, in messages per second (the acks not counted).
 *
 * Usage: p2p_overhead [plain|checked|floor] (a label; "floor" also sends,
 * with each user message, a 48-byte message of the program's own on a
 * duplicate communicator, posted with MPI_Isend before the user's send and
 * received after the user's receive, its requests waited 64 at a time: the
 * messages the checker adds, without the checker's own work. Run it
 * without the checker.)
 * Output lines: "pingpong LABEL SIZE TYPE MEDIAN_US MB_S BEST_US" and
 * "rate LABEL 8 byte MEDIAN_MSGS_PER_S BEST_MSGS_PER_S". */
/* gcc misreads MPICH's MPI_STATUSES_IGNORE as a zero-length array. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 15
#define REP_SECONDS 0.005
#define WINDOW 64

static int rank;
static int floor_mode;
static MPI_Comm fcomm = MPI_COMM_NULL; /* the floor's own messages */
static char fbuf[WINDOW][48];
static MPI_Request freq[WINDOW];
static int nfreq;

/* The floor's companion of a send to `peer`. */
static void floor_send(int peer, int tag) {
    if (!floor_mode) return;
    if (nfreq == WINDOW) {
        MPI_Waitall(nfreq, freq, MPI_STATUSES_IGNORE);
        nfreq = 0;
    }
    MPI_Isend(fbuf[nfreq], 48, MPI_BYTE, peer, tag, fcomm, &freq[nfreq]);
    nfreq++;
}

/* The floor's companion of a message received from `peer`. */
static void floor_recv(int peer, int tag) {
    char b[48];
    if (floor_mode) MPI_Recv(b, 48, MPI_BYTE, peer, tag, fcomm, MPI_STATUS_IGNORE);
}

static void floor_flush(void) {
    if (floor_mode && nfreq) MPI_Waitall(nfreq, freq, MPI_STATUSES_IGNORE);
    nfreq = 0;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, n, sizeof(double), cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ITERS round trips of (count, t) between ranks 0 and 1: seconds. */
static double pingpong_into(void *buf, int count, MPI_Datatype t, int rcount, MPI_Datatype rt,
                           int iters) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            floor_send(1, 1);
            MPI_Send(buf, count, t, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, rcount, rt, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            floor_recv(1, 1);
        } else if (rank == 1) {
            MPI_Recv(buf, rcount, rt, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            floor_recv(0, 1);
            floor_send(0, 1);
            MPI_Send(buf, count, t, 0, 1, MPI_COMM_WORLD);
        }
    }
    double dt = MPI_Wtime() - t0;
    floor_flush();
    MPI_Bcast(&dt, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return dt;
}

/* The median and best one-way latency (us) of REPS repetitions, after a
 * warm-up that sets the iterations. */
static void timed(const char *label, int n, const char *tname, void *buf, int count, MPI_Datatype t,
                  int rcount, MPI_Datatype rt) {
    pingpong_into(buf, count, t, rcount, rt, 2);
    double w = pingpong_into(buf, count, t, rcount, rt, 20) / 20;
    int iters = w * 20000 < REP_SECONDS ? 20000 : w * 3 > REP_SECONDS ? 3 : (int)(REP_SECONDS / w);
    pingpong_into(buf, count, t, rcount, rt, iters / 10 + 1);
    double lat[REPS];
    for (int r = 0; r < REPS; r++) lat[r] = pingpong_into(buf, count, t, rcount, rt, iters) / iters / 2;
    double m = median(lat, REPS); /* sorts lat */
    if (rank == 0) printf("pingpong %s %d %s %.3f %.1f %.3f\n", label, n, tname, m * 1e6, n / m / 1e6, lat[0] * 1e6);
    fflush(stdout);
}

/* WINDOWS windows of 64 messages of 8 bytes from rank 0 to rank 1, each
 * acknowledged: seconds. */
static double rate(int windows) {
    char sb[WINDOW][8], rb[WINDOW][8];
    MPI_Request req[WINDOW];
    memset(sb, 1, sizeof sb);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int w = 0; w < windows; w++) {
        if (rank == 0) {
            for (int i = 0; i < WINDOW; i++) {
                floor_send(1, 2);
                MPI_Isend(sb[i], 8, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req[i]);
            }
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            floor_recv(1, 3);
        } else if (rank == 1) {
            for (int i = 0; i < WINDOW; i++) MPI_Irecv(rb[i], 8, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &req[i]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            for (int i = 0; i < WINDOW; i++) floor_recv(0, 2);
            floor_send(0, 3);
            MPI_Send(NULL, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        }
    }
    double dt = MPI_Wtime() - t0;
    floor_flush();
    MPI_Bcast(&dt, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return dt;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *label = argc > 1 ? argv[1] : "run";
    floor_mode = strcmp(label, "floor") == 0;
    if (floor_mode) MPI_Comm_dup(MPI_COMM_WORLD, &fcomm);
    if (size < 2) {
        if (rank == 0) fprintf(stderr, "p2p_overhead: needs 2 ranks or more\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    static const int sizes[] = {1, 8, 64, 512, 4096, 32768, 262144, 1048576, 4194304};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    char *buf = calloc(2 * 4194304, 1);
    for (int s = 0; s < nsizes; s++) {
        int n = sizes[s];
        for (int derived = 0; derived < 2; derived++) {
            MPI_Datatype t = MPI_BYTE;
            int count = n;
            if (derived) {
                if (n < 8) MPI_Type_contiguous(n, MPI_CHAR, &t);
                else {
                    int b = n / 8 < 8 ? n / 8 : 8;
                    MPI_Type_vector(n / 8 / b, b, 2 * b, MPI_DOUBLE, &t);
                }
                MPI_Type_commit(&t);
                count = 1;
            }
            timed(label, n, derived ? "vector" : "byte", buf, count, t, count, t);
            if (derived) MPI_Type_free(&t);
        }
    }
    {
        /* One MPI_INT into a receive of 10^9 (a vector of 10^9 ints, every
         * other one): a legal prefix, whose check hashes the first element
         * of a 10^9-element type. */
        MPI_Datatype huge;
        MPI_Type_vector(1000000000, 1, 2, MPI_INT, &huge);
        MPI_Type_commit(&huge);
        timed(label, 4, "huge", buf, 1, MPI_INT, 1, huge);
        MPI_Type_free(&huge);
    }
    int windows = 100;
    rate(windows / 10);
    double mr[REPS];
    for (int r = 0; r < REPS; r++) mr[r] = (double)windows * WINDOW / rate(windows);
    double m = median(mr, REPS); /* sorts mr */
    if (rank == 0) printf("rate %s 8 byte %.0f %.0f\n", label, m, mr[REPS - 1]);
    free(buf);
    if (floor_mode) MPI_Comm_free(&fcomm);
    MPI_Finalize();
    return 0;
}
