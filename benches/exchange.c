/* The type exchange's cost, under mpiexec -n 2 (scripts/exchange-bench.sh).
 *
 * Rank 0 sends a datatype to rank 1, which rebuilds it, frees it and
 * answers with an empty message; the figure is the mean round trip per
 * operation (the median round trip, the best of three sweeps), for:
 *   floor(ref)   a plain MPI_Send/MPI_Recv of as many bytes as a reference (16)
 *   cached       MPIX_Type_send / MPIX_Type_recv of a type sent before
 *   floor(desc)  a plain MPI_Send/MPI_Recv of as many bytes as its description
 *   first        MPIX_Type_send / MPIX_Type_recv of a type the receiver does
 *                not have (cache limit 1, two names alternating: every send
 *                is a description)
 *   m+s+u ext    what a user does without the exchange: MPIX_Type_marshal
 *                ("external") + MPI_Send, MPI_Probe + MPI_Recv +
 *                MPIX_Type_unmarshal, every time
 *   m+s+u int    the same with "internal"
 * all in one run. */
#include <mpix_marshal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK(call)                                                                       \
    do {                                                                               \
        int rc_ = (call);                                                              \
        if (rc_ != MPI_SUCCESS) {                                                      \
            fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #call, rc_); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                              \
        }                                                                              \
    } while (0)

static int rank;
static int iters = 2000;

enum mode { FLOOR, CACHED, FIRST, MSU_EXT, MSU_INT };

static void ack_send(MPI_Comm c) { MPI_Send(NULL, 0, MPI_BYTE, 0, 99, c); }
static void ack_recv(MPI_Comm c) { MPI_Recv(NULL, 0, MPI_BYTE, 1, 99, c, MPI_STATUS_IGNORE); }

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One sweep of `mode`: median microseconds per round trip. */
static double sweep(enum mode m, MPI_Datatype t[2], int bytes, MPI_Comm c)
{
    char *buf = malloc((size_t)bytes + 1);
    memset(buf, 1, (size_t)bytes + 1);
    MPI_Aint cap = 0;
    if (m == MSU_EXT || m == MSU_INT) {
        OK(MPIX_Type_marshal_size(m == MSU_EXT ? "external" : "internal", t[0], &cap));
        buf = realloc(buf, (size_t)cap * 2 + 64);
    }
    MPI_Barrier(c);
    double *times = malloc(sizeof(double) * (size_t)iters);
    for (int i = 0; i < iters; i++) {
        MPI_Datatype send = t[m == FIRST ? i % 2 : 0], got;
        double t0 = MPI_Wtime();
        if (rank == 0) {
            switch (m) {
            case FLOOR: OK(MPI_Send(buf, bytes, MPI_BYTE, 1, 1, c)); break;
            case CACHED:
            case FIRST: OK(MPIX_Type_send(send, 1, 1, c)); break;
            default: {
                MPI_Aint n;
                OK(MPIX_Type_marshal(m == MSU_EXT ? "external" : "internal", send, buf, cap * 2 + 64, &n));
                OK(MPI_Send(buf, (int)n, MPI_BYTE, 1, 1, c));
            }
            }
            ack_recv(c);
        } else {
            switch (m) {
            case FLOOR: OK(MPI_Recv(buf, bytes, MPI_BYTE, 0, 1, c, MPI_STATUS_IGNORE)); break;
            case CACHED:
            case FIRST:
                OK(MPIX_Type_recv(&got, 0, 1, c, MPI_STATUS_IGNORE));
                OK(MPI_Type_free(&got));
                break;
            default: {
                MPI_Status st;
                int n;
                OK(MPI_Probe(0, 1, c, &st));
                OK(MPI_Get_count(&st, MPI_BYTE, &n));
                OK(MPI_Recv(buf, n, MPI_BYTE, 0, 1, c, MPI_STATUS_IGNORE));
                OK(MPIX_Type_unmarshal(m == MSU_EXT ? "external" : "internal", buf, n, &got));
                OK(MPI_Type_free(&got));
            }
            }
            ack_send(c);
        }
        times[i] = MPI_Wtime() - t0;
    }
    /* The median round trip: on a shared machine a mean measures the
     * scheduler. */
    qsort(times, (size_t)iters, sizeof(double), by_value);
    double us = times[iters / 2] * 1e6;
    free(times);
    free(buf);
    MPI_Bcast(&us, 1, MPI_DOUBLE, 0, c);
    return us;
}

static double best(enum mode m, MPI_Datatype t[2], int bytes, MPI_Comm c)
{
    double b = 1e30;
    for (int k = 0; k < 3; k++) {
        double us = sweep(m, t, bytes, c);
        if (us < b)
            b = us;
    }
    return b;
}

static MPI_Datatype named(MPI_Datatype t, const char *name)
{
    OK(MPI_Type_set_name(t, name));
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "run with mpiexec -n 2\n");
        MPI_Finalize();
        return 2;
    }
    if (argc > 1)
        iters = atoi(argv[1]);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    char *nl = strchr(lib, '\n');
    if (nl)
        *nl = 0;

    enum { NT = 4 };
    const char *names[NT] = {"column of 1000x1000", "subarray 3-d", "indexed 1000 blocks", "struct of 3"};
    MPI_Datatype types[NT][2];
    for (int v = 0; v < 2; v++) {
        const char *tag = v ? "b" : "a";
        MPI_Datatype t;
        OK(MPI_Type_vector(1000, 1, 1000, MPI_DOUBLE, &t));
        types[0][v] = named(t, tag);
        int sizes[3] = {64, 64, 64}, sub[3] = {16, 8, 32}, st[3] = {4, 2, 8};
        OK(MPI_Type_create_subarray(3, sizes, sub, st, MPI_ORDER_C, MPI_FLOAT, &t));
        types[1][v] = named(t, tag);
        int bl[1000], d[1000];
        for (int i = 0; i < 1000; i++) {
            bl[i] = 1 + i % 3;
            d[i] = i * 7;
        }
        OK(MPI_Type_indexed(1000, bl, d, MPI_INT, &t));
        types[2][v] = named(t, tag);
        int sbl[3] = {2, 2, 1};
        MPI_Aint sd[3] = {0, 16, 24};
        MPI_Datatype stt[3] = {MPI_DOUBLE, MPI_INT, MPI_FLOAT};
        OK(MPI_Type_create_struct(3, sbl, sd, stt, &t));
        types[3][v] = named(t, tag);
    }
    /* Limit 1 on the "first" communicator: every send describes. */
    MPI_Comm cached, first;
    MPI_Comm_dup(MPI_COMM_WORLD, &cached);
    OK(MPIX_Type_exchange_set_cache_limit(1));
    MPI_Comm_dup(MPI_COMM_WORLD, &first);
    /* The first exchange call on each sets it up (collective). */
    MPI_Datatype warm[2];
    OK(MPI_Type_contiguous(2, MPI_INT, &warm[0]));
    warm[1] = warm[0];
    sweep(FIRST, warm, 0, first);
    OK(MPIX_Type_exchange_set_cache_limit(64));
    sweep(CACHED, warm, 0, cached);
    OK(MPI_Type_free(&warm[0]));

    if (rank == 0) {
        printf("type exchange, %s, median of %d round trips (best of 3 sweeps), microseconds per operation\n", lib,
               iters);
        printf("%-22s %8s %10s %8s %11s %8s %10s %10s\n", "type", "desc B", "floor(16)", "cached", "floor(desc)",
               "first", "m+s+u ext", "m+s+u int");
    }
    for (int k = 0; k < NT; k++) {
        MPI_Aint desc;
        OK(MPIX_Type_marshal_size("internal", types[k][0], &desc));
        MPI_Aint ext;
        OK(MPIX_Type_marshal_size("external", types[k][0], &ext));
        /* The exchange's description: a 48-byte header and the stream. */
        int desc_bytes = (int)desc + 48;
        double f16 = best(FLOOR, types[k], MPIX_TYPE_REFERENCE_SIZE, MPI_COMM_WORLD);
        double c = best(CACHED, types[k], 0, cached);
        double fd = best(FLOOR, types[k], desc_bytes, MPI_COMM_WORLD);
        double fi = best(FIRST, types[k], 0, first);
        double me = best(MSU_EXT, types[k], 0, MPI_COMM_WORLD);
        double mi = best(MSU_INT, types[k], 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%-22s %8d %10.2f %8.2f %11.2f %8.2f %10.2f %10.2f\n", names[k], desc_bytes, f16, c, fd, fi, me,
                   mi);
    }
    for (int k = 0; k < NT; k++)
        for (int v = 0; v < 2; v++)
            MPI_Type_free(&types[k][v]);
    MPI_Comm_free(&cached);
    MPI_Comm_free(&first);
    MPI_Finalize();
    return 0;
}
