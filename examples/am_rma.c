/* Active-message RMA with a derived *target* datatype over two-sided
 * messages: the case that motivated datatype marshalling (Kimpe, Goodell
 * and Ross). The origin knows the layout of the target's window memory as
 * an MPI datatype; the target must rebuild that datatype to unpack the
 * data. Put and accumulate (MPI_SUM on doubles) are implemented four ways
 * and compared with native MPI_Put/MPI_Accumulate of the same target type:
 *
 *   reference  one message: the type's 16-byte reference
 *              (MPIX_Type_reference) in front of the data; the target
 *              resolves it to the committed type its cache holds
 *              (MPIX_Type_resolve, no MPI call once cached), unpacks into
 *              its window memory and gives the type back (MPIX_Type_release)
 *   send/recv  MPIX_Type_send of the target type (a 16-byte reference
 *              once the target has it) + the data in a second message; the
 *              target rebuilds a new handle with MPIX_Type_recv each time
 *   no cache   the description every time (what MPICH and Open MPI 4.1's
 *              pt2pt component do per operation): MPIX_Type_marshal
 *              ("internal") + the data; MPIX_Type_unmarshal at the target
 *   data only  the floor: the data alone, the target already holding the
 *              committed type
 *   native     MPI_Put / MPI_Accumulate + MPI_Win_flush, passive target
 *
 * Each operation completes at the target before the next starts (an
 * empty acknowledgement for the two-sided ones, MPI_Win_flush for the
 * native ones); the methods take turns in blocks, and the figures are
 * medians over the operations. Every even
 * rank is an origin for the next odd rank. The window contents are
 * checked after every method on every target.
 *
 * Usage: mpiexec -n 2 ./am_rma [operations]   (default 1000)
 */
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

#define N 512 /* the window: an N x N matrix of doubles */
enum { TAG_PUT = 1, TAG_ACC = 2, TAG_DATA = 3, TAG_ACK = 4 };
enum method { REFERENCE, SEND_RECV, NO_CACHE, DATA_ONLY, NATIVE, METHODS };
static const char *method_name[METHODS] = {"reference", "send/recv", "no cache", "data only", "native"};
#define REF MPIX_TYPE_REFERENCE_SIZE
#define ROUNDS 10

static int rank, size, peer, origin, failures = 0;
static double *win_mem;
static MPI_Win win;

static MPI_Datatype target_type(int k)
{
    MPI_Datatype t;
    if (k == 0) {
        OK(MPI_Type_vector(N, 1, N, MPI_DOUBLE, &t));
        OK(MPI_Type_set_name(t, "column"));
    } else if (k == 1) {
        int sizes[2] = {N, N}, sub[2] = {64, 64}, st[2] = {10, 20};
        OK(MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, MPI_DOUBLE, &t));
        OK(MPI_Type_set_name(t, "subarray 64x64"));
    } else {
        int bl[1000], d[1000];
        for (int i = 0; i < 1000; i++) {
            bl[i] = 1 + i % 3;
            d[i] = i * 7;
        }
        OK(MPI_Type_indexed(1000, bl, d, MPI_DOUBLE, &t));
        OK(MPI_Type_set_name(t, "indexed 1000 blocks"));
    }
    return t;
}

static void fill(double *data, int n, int op)
{
    for (int j = 0; j < n; j++)
        data[j] = op * 10000.0 + j;
}

/* Puts or accumulates `bytes` packed bytes into the window memory, where
 * `t` points. */
static void apply(int op, MPI_Datatype t, const double *packed, int bytes, double *cur)
{
    int pos = 0;
    if (op == TAG_PUT) {
        OK(MPI_Unpack(packed, bytes, &pos, win_mem, 1, t, MPI_COMM_SELF));
        return;
    }
    OK(MPI_Pack(win_mem, 1, t, cur, bytes, &pos, MPI_COMM_SELF));
    for (int j = 0; j < bytes / 8; j++)
        cur[j] += packed[j];
    pos = 0;
    OK(MPI_Unpack(cur, bytes, &pos, win_mem, 1, t, MPI_COMM_SELF));
}

/* The target's side of one two-sided operation. `msg` has REF bytes of
 * room in front of `msg + REF`, where the data lands. */
static void serve(enum method m, MPI_Datatype known, char *msg, double *cur, char *desc, MPI_Aint desc_cap)
{
    double *data = (double *)(msg + REF);
    int cap = N * N * 8;
    MPI_Datatype t = known;
    MPI_Status st;
    if (m == REFERENCE) {
        /* One message: the reference, then the data. */
        OK(MPI_Recv(msg, REF + cap, MPI_BYTE, origin, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        OK(MPIX_Type_resolve(msg, origin, MPI_COMM_WORLD, &t));
    } else if (m == SEND_RECV) {
        OK(MPIX_Type_recv(&t, origin, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        OK(MPI_Type_commit(&t));
        OK(MPI_Recv(data, cap, MPI_BYTE, origin, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else if (m == NO_CACHE) {
        int n;
        OK(MPI_Probe(origin, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        OK(MPI_Get_count(&st, MPI_BYTE, &n));
        OK(MPI_Recv(desc, (int)desc_cap, MPI_BYTE, origin, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPIX_Type_unmarshal("internal", desc, n, &t));
        OK(MPI_Type_commit(&t));
        OK(MPI_Recv(data, cap, MPI_BYTE, origin, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        OK(MPI_Recv(data, cap, MPI_BYTE, origin, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    }
    int bytes;
    OK(MPI_Type_size(t, &bytes));
    apply(st.MPI_TAG, t, data, bytes, cur);
    if (m == REFERENCE)
        OK(MPIX_Type_release(&t));
    else if (t != known)
        OK(MPI_Type_free(&t));
    OK(MPI_Send(NULL, 0, MPI_BYTE, origin, TAG_ACK, MPI_COMM_WORLD));
}

/* The origin's side of one operation: the data is at `msg + REF`. */
static void issue(enum method m, int acc, MPI_Datatype t, char *msg, int n, char *desc, MPI_Aint desc_cap)
{
    int tag = acc ? TAG_ACC : TAG_PUT;
    double *data = (double *)(msg + REF);
    if (m == NATIVE) {
        if (acc)
            OK(MPI_Accumulate(data, n, MPI_DOUBLE, peer, 0, 1, t, MPI_SUM, win));
        else
            OK(MPI_Put(data, n, MPI_DOUBLE, peer, 0, 1, t, win));
        OK(MPI_Win_flush(peer, win));
        return;
    }
    if (m == REFERENCE) {
        OK(MPIX_Type_reference(t, peer, MPI_COMM_WORLD, msg));
        OK(MPI_Send(msg, REF + n * 8, MPI_BYTE, peer, tag, MPI_COMM_WORLD));
    } else if (m == DATA_ONLY) {
        OK(MPI_Send(data, n * 8, MPI_BYTE, peer, tag, MPI_COMM_WORLD));
    } else {
        if (m == SEND_RECV) {
            OK(MPIX_Type_send(t, peer, tag, MPI_COMM_WORLD));
        } else {
            MPI_Aint len;
            OK(MPIX_Type_marshal("internal", t, desc, desc_cap, &len));
            OK(MPI_Send(desc, (int)len, MPI_BYTE, peer, tag, MPI_COMM_WORLD));
        }
        OK(MPI_Send(data, n * 8, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD));
    }
    OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* `ops` operations of one method, their times (seconds, at the origin;
 * 0 elsewhere) written to `times`. Puts write op i's values; with `acc`,
 * every operation adds op 1's values. */
static void run(enum method m, int acc, MPI_Datatype t, int ops, double *times, char *msg, double *cur, char *desc,
                MPI_Aint desc_cap)
{
    int bytes;
    OK(MPI_Type_size(t, &bytes));
    int n = bytes / 8;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < ops; i++) {
        times[i] = 0;
        if (peer < 0)
            continue;
        if (rank % 2 == 0) {
            fill((double *)(msg + REF), n, acc ? 1 : i);
            double t0 = MPI_Wtime();
            issue(m, acc, t, msg, n, desc, desc_cap);
            times[i] = MPI_Wtime() - t0;
        } else if (m != NATIVE) {
            serve(m, t, msg, cur, desc, desc_cap);
        }
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* The median of `n` times, in microseconds: on a shared machine a mean
 * measures the scheduler. */
static double median_us(double *times, int n)
{
    qsort(times, (size_t)n, sizeof(double), by_value);
    return times[n / 2] * 1e6;
}

/* On a target, outside any epoch (between barriers): the window holds what the last round left (`ops`
 * operations), where the type points, and zeros elsewhere. */
static void check(enum method m, int acc, MPI_Datatype t, int ops, double *tmp, double *cur)
{
    if (peer < 0 || rank % 2 == 0)
        return;
    int bytes, pos = 0;
    OK(MPI_Type_size(t, &bytes));
    int n = bytes / 8;
    OK(MPI_Pack(win_mem, 1, t, cur, bytes, &pos, MPI_COMM_SELF));
    fill(tmp, n, acc ? 1 : ops - 1);
    for (int j = 0; j < n; j++) {
        double want = acc ? tmp[j] * ops : tmp[j];
        if (cur[j] != want) {
            fprintf(stderr, "rank %d, %s %s: element %d is %g, expected %g\n", rank, method_name[m],
                    acc ? "accumulate" : "put", j, cur[j], want);
            failures++;
            break;
        }
    }
    /* Nothing outside the type: zero it where the type points, then all
     * of the window must be zero. */
    memset(cur, 0, (size_t)bytes);
    pos = 0;
    OK(MPI_Unpack(cur, bytes, &pos, win_mem, 1, t, MPI_COMM_SELF));
    for (long j = 0; j < (long)N * N; j++) {
        if (win_mem[j] != 0.0) {
            fprintf(stderr, "rank %d, %s: window element %ld written outside the type\n", rank, method_name[m], j);
            failures++;
            break;
        }
    }
}

/* Ends the passive-target epoch, checks the targets' windows, and
 * starts the next epoch once every target is done. */
static void settle_and_check(enum method m, int acc, MPI_Datatype t, int ops, double *tmp, double *cur)
{
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    check(m, acc, t, ops, tmp, cur);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_lock_all(0, win));
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int ops = argc > 1 ? atoi(argv[1]) : 1000;
    if (ops < 1)
        ops = 1;
    peer = rank % 2 == 0 ? (rank + 1 < size ? rank + 1 : -1) : rank - 1;
    origin = rank % 2 == 1 ? rank - 1 : -1;
    OK(MPI_Win_allocate((MPI_Aint)N * N * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem, &win));
    memset(win_mem, 0, (size_t)N * N * 8);
    /* The exchange's set-up is collective: done here, on every rank
     * (ranks without a peer included), so that no operation has to be. */
    OK(MPIX_Type_exchange_setup(MPI_COMM_WORLD));
    /* The origin's data (and the target's receive buffer) with room for a
     * reference in front, as an active-message layer keeps for its header. */
    char *msg = malloc(REF + (size_t)N * N * 8);
    double *times[METHODS];
    for (int m = 0; m < METHODS; m++)
        times[m] = malloc(sizeof(double) * (size_t)(ops + ROUNDS + 3));
    double *tmp = malloc((size_t)N * N * 8), *cur = malloc((size_t)N * N * 8);
    MPI_Aint desc_cap = 1 << 20;
    char *desc = malloc((size_t)desc_cap);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    char *nl = strchr(lib, '\n');
    if (nl)
        *nl = 0;
    if (rank == 0)
        printf("active-message RMA, %s, %d ranks, %d operations per figure, median per operation:\n"
               "%-20s %-10s %6s %6s %9s | %9s %9s %9s %9s %9s | %9s\n",
               lib, size, ops, "target type", "op", "data B", "ref B", "nocache B", "ref us", "send/recv", "no cache",
               "floor us", "ref-floor", "native us");
    OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < 3; k++) {
        MPI_Datatype t = target_type(k);
        OK(MPI_Type_commit(&t));
        MPI_Aint desc_len;
        OK(MPIX_Type_marshal_size("internal", t, &desc_len));
        int bytes;
        OK(MPI_Type_size(t, &bytes));
        for (int acc = 0; acc < 2; acc++) {
            /* The methods take turns, ROUNDS blocks of ops / ROUNDS
             * operations each, so that a busy machine weighs on all alike;
             * each block is checked. */
            /* (Fewer rounds for fewer operations: a test's short run.) */
            int rounds = ops < ROUNDS ? ops : ROUNDS;
            int block = ops / rounds;
            double us[METHODS];
            for (int m = 0; m < METHODS; m++) {
                /* Warm-up (the reference and send/recv methods describe
                 * the type the first time). */
                run((enum method)m, acc, t, 3, times[m], msg, cur, desc, desc_cap);
                settle_and_check((enum method)m, acc, t, 3, tmp, cur);
            }
            for (int r = 0; r < rounds; r++)
                for (int m = 0; m < METHODS; m++) {
                    run((enum method)m, acc, t, block, times[m] + (size_t)r * block, msg, cur, desc, desc_cap);
                    settle_and_check((enum method)m, acc, t, block, tmp, cur);
                }
            for (int m = 0; m < METHODS; m++)
                us[m] = median_us(times[m], rounds * block);
            if (rank == 0)
                printf("%-20s %-10s %6d %6d %9ld | %9.2f %9.2f %9.2f %9.2f %+9.2f | %9.2f\n",
                       k == 0 ? "column" : k == 1 ? "subarray 64x64" : "indexed 1000 blocks", acc ? "accumulate" : "put",
                       bytes, bytes + REF, (long)(bytes + desc_len), us[REFERENCE], us[SEND_RECV], us[NO_CACHE],
                       us[DATA_ONLY], us[REFERENCE] - us[DATA_ONLY], us[NATIVE]);
        }
        OK(MPI_Type_free(&t));
    }
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Win_free(&win));
    free(msg);
    for (int m = 0; m < METHODS; m++)
        free(times[m]);
    free(tmp);
    free(cur);
    free(desc);
    int total;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("am_rma: %s\n", total == 0 ? "every window checked on every target" : "FAILED");
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
