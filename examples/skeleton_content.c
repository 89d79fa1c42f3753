/* Skeleton and content (Gauckler and Egloff, Boost.MPI), in C with the
 * type exchange of mpix-marshal.
 *
 * Rank 0 holds a list of gps_position records whose length is decided at
 * run time, in memory it allocated record by record (the list is not
 * contiguous). It describes that structure once as an MPI datatype (the
 * skeleton: an hindexed type over the absolute addresses of the records,
 * made relative to the first one) and sends it to every other rank with
 * MPIX_Type_bcast. The receivers get the skeleton rebuilt with its
 * extent and true extent, allocate one buffer of that size, and then
 * receive the content -- the values only -- many times with ordinary
 * MPI_Send/MPI_Recv on the received type. Each round the content changes
 * and every receiver checks what it got. Rank 0 also sends a second,
 * longer list to rank 1 point to point (MPIX_Type_send/MPIX_Type_recv),
 * and then the first skeleton again: the second time only a 16-byte
 * reference travels.
 *
 * Usage: mpiexec -n N ./skeleton_content [records] [rounds]
 */
#include <mpix_marshal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double lat, lon;
    int degrees, minutes;
    float seconds;
} gps_position;

static int failures = 0;

#define OK(call)                                                                       \
    do {                                                                               \
        int rc_ = (call);                                                              \
        if (rc_ != MPI_SUCCESS) {                                                      \
            char s_[MPI_MAX_ERROR_STRING];                                             \
            int l_;                                                                    \
            MPI_Error_string(rc_, s_, &l_);                                            \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, s_); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                              \
        }                                                                              \
    } while (0)

/* One record's type, named, its extent that of the C struct. */
static MPI_Datatype gps_type(void)
{
    int bl[3] = {2, 2, 1};
    MPI_Aint d[3] = {offsetof(gps_position, lat), offsetof(gps_position, degrees),
                     offsetof(gps_position, seconds)};
    MPI_Datatype t[3] = {MPI_DOUBLE, MPI_INT, MPI_FLOAT}, s, r;
    OK(MPI_Type_create_struct(3, bl, d, t, &s));
    OK(MPI_Type_create_resized(s, 0, sizeof(gps_position), &r));
    OK(MPI_Type_free(&s));
    OK(MPI_Type_set_name(r, "gps_position"));
    return r;
}

static void fill(gps_position *p, int i, int round)
{
    p->lat = 47.0 + i * 0.001 + round;
    p->lon = 8.5 - i * 0.002 - round;
    p->degrees = i + round;
    p->minutes = (i * 7 + round) % 60;
    p->seconds = (float)(i % 60) + 0.5f * (float)round;
}

static int same(const gps_position *p, int i, int round)
{
    gps_position want;
    fill(&want, i, round);
    return p->lat == want.lat && p->lon == want.lon && p->degrees == want.degrees &&
           p->minutes == want.minutes && p->seconds == want.seconds;
}

/* The skeleton of a list: the records where they are in memory. */
static MPI_Datatype skeleton(gps_position **list, int n)
{
    MPI_Datatype rec = gps_type(), sk;
    int *bl = malloc(sizeof(int) * (size_t)n);
    MPI_Aint *d = malloc(sizeof(MPI_Aint) * (size_t)n), base;
    MPI_Get_address(list[0], &base);
    for (int i = 0; i < n; i++) {
        bl[i] = 1;
        MPI_Get_address(list[i], &d[i]);
        d[i] = MPI_Aint_diff(d[i], base);
    }
    OK(MPI_Type_create_hindexed(n, bl, d, rec, &sk));
    OK(MPI_Type_set_name(sk, "gps list"));
    OK(MPI_Type_free(&rec));
    free(bl);
    free(d);
    return sk;
}

/* Receives content with the skeleton `sk` into a buffer allocated from
 * its true extent, and checks `n` records against round `round`. The
 * records are the typemap's blocks in order: a receiver that knows
 * nothing of the sender's memory reads them back as a packed array. */
static void receive_content(MPI_Datatype sk, int n, int rounds, int src, int tag, MPI_Comm comm)
{
    MPI_Aint lb, extent, tlb, textent;
    OK(MPI_Type_get_extent(sk, &lb, &extent));
    OK(MPI_Type_get_true_extent(sk, &tlb, &textent));
    char *mem = malloc((size_t)textent);
    char *base = mem - tlb; /* the buffer argument: true lb at mem */
    int size;
    OK(MPI_Type_size(sk, &size));
    MPI_Datatype rec = gps_type(), contig;
    OK(MPI_Type_contiguous(n, rec, &contig));
    OK(MPI_Type_commit(&contig));
    gps_position *flat = malloc(sizeof(gps_position) * (size_t)n);
    for (int round = 0; round < rounds; round++) {
        OK(MPI_Recv(base, 1, sk, src, tag, comm, MPI_STATUS_IGNORE));
        /* Unpack the received layout into a plain array to check it. */
        int pos = 0;
        char *packed = malloc((size_t)size);
        OK(MPI_Pack(base, 1, sk, packed, size, &pos, MPI_COMM_SELF));
        pos = 0;
        OK(MPI_Unpack(packed, size, &pos, flat, 1, contig, MPI_COMM_SELF));
        free(packed);
        for (int i = 0; i < n; i++) {
            if (!same(&flat[i], i, round)) {
                fprintf(stderr, "round %d record %d differs\n", round, i);
                failures++;
                break;
            }
        }
    }
    free(flat);
    free(mem);
    MPI_Type_free(&contig);
    MPI_Type_free(&rec);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int rounds = argc > 2 ? atoi(argv[2]) : 20;
    if (n < 1 || rounds < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: skeleton_content [records >= 1] [rounds >= 1]\n");
        MPI_Finalize();
        return 2;
    }
    /* The list's length is decided at run time, by rank 0 only. */
    MPI_Datatype sk = MPI_DATATYPE_NULL;
    gps_position **list = NULL;
    if (rank == 0) {
        list = malloc(sizeof *list * (size_t)n);
        for (int i = 0; i < n; i++)
            list[i] = malloc(sizeof(gps_position)); /* scattered in the heap */
        sk = skeleton(list, n);
    }
    /* I. The skeleton, once, to every rank. */
    OK(MPIX_Type_bcast(&sk, 0, MPI_COMM_WORLD));
    OK(MPI_Type_commit(&sk));
    /* The receivers learn the record count from the skeleton's size. */
    int sksize;
    OK(MPI_Type_size(sk, &sksize));
    int records = sksize / (2 * 8 + 2 * 4 + 4);
    /* II. The content, many times, with plain MPI. */
    if (rank == 0) {
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < n; i++)
                fill(list[i], i, round);
            for (int dest = 1; dest < size; dest++)
                OK(MPI_Send(list[0], 1, sk, dest, 1, MPI_COMM_WORLD));
        }
    } else {
        receive_content(sk, records, rounds, 0, 1, MPI_COMM_WORLD);
    }

    /* III. Point to point: a longer list to rank 1, then the first
     * skeleton again (now a reference only). */
    if (size > 1 && rank <= 1) {
        if (rank == 0) {
            int m = n * 2;
            gps_position **list2 = malloc(sizeof *list2 * (size_t)m);
            for (int i = 0; i < m; i++)
                list2[i] = malloc(sizeof(gps_position));
            MPI_Datatype sk2 = skeleton(list2, m);
            OK(MPI_Type_commit(&sk2));
            OK(MPIX_Type_send(sk2, 1, 2, MPI_COMM_WORLD));
            OK(MPIX_Type_send(sk, 1, 3, MPI_COMM_WORLD));
            for (int i = 0; i < m; i++)
                fill(list2[i], i, 0);
            OK(MPI_Send(list2[0], 1, sk2, 1, 4, MPI_COMM_WORLD));
            for (int i = 0; i < m; i++)
                free(list2[i]);
            free(list2);
            OK(MPI_Type_free(&sk2));
        } else {
            MPI_Datatype got2, again;
            MPI_Status st;
            OK(MPIX_Type_recv(&got2, 0, 2, MPI_COMM_WORLD, &st));
            OK(MPIX_Type_recv(&again, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            if (st.MPI_SOURCE != 0 || st.MPI_TAG != 3) {
                fprintf(stderr, "status: source %d tag %d\n", st.MPI_SOURCE, st.MPI_TAG);
                failures++;
            }
            int result;
            char why[200];
            OK(MPIX_Type_compare(sk, again, MPIX_COMPARE_NAMES, &result, why, sizeof why));
            if (result != 0) {
                fprintf(stderr, "the skeleton sent again differs: %s\n", why);
                failures++;
            }
            OK(MPI_Type_commit(&got2));
            OK(MPI_Type_size(got2, &sksize));
            receive_content(got2, sksize / (2 * 8 + 2 * 4 + 4), 1, 0, 4, MPI_COMM_WORLD);
            OK(MPI_Type_free(&got2));
            OK(MPI_Type_free(&again));
        }
    }
    OK(MPI_Type_free(&sk));
    if (rank == 0) {
        for (int i = 0; i < n; i++)
            free(list[i]);
        free(list);
    }
    int total;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("skeleton_content: %d records, %d rounds, %d ranks: %s\n", n, rounds, size,
               total == 0 ? "content checked on every rank" : "FAILED");
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
