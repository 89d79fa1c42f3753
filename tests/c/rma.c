/* The paper's RMA case: each target marshals the datatype that describes
 * its window layout; the origin (rank 0) rebuilds it and uses it as the
 * target datatype of MPI_Put and MPI_Get; the window contents are checked. */
#include "check.h"
#include <mpix_marshal.h>
#include <string.h>

enum { ROWS = 6, COLS = 8 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* Each target's window is a ROWS x COLS int matrix; the part it exposes
     * is a column block that differs per rank. */
    int *win_mem;
    MPI_Win win;
    MPI_Win_allocate(ROWS * COLS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem, &win);
    for (int i = 0; i < ROWS * COLS; i++)
        win_mem[i] = -1;

    int sizes[2] = {ROWS, COLS}, sub[2] = {ROWS - 2, 2}, starts[2] = {1, rank % (COLS - 2)};
    MPI_Datatype layout;
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &layout);
    MPI_Type_set_name(layout, "window column block");
    MPI_Aint n;
    unsigned char bytes[512];
    MPI_OK(MPIX_Type_marshal("external", layout, bytes, sizeof bytes, &n));

    /* Targets send their layout description to the origin. */
    if (rank != 0) {
        MPI_Send(bytes, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
    int count = (ROWS - 2) * 2;
    MPI_Win_fence(0, win);
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            unsigned char remote[512];
            MPI_Status st;
            int len;
            MPI_Recv(remote, sizeof remote, MPI_BYTE, r, 0, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &len);
            MPI_Datatype target;
            MPI_OK(MPIX_Type_unmarshal("external", remote, len, &target));
            MPI_Type_commit(&target);
            int data[(ROWS - 2) * 2];
            for (int i = 0; i < count; i++)
                data[i] = 1000 * r + i;
            MPI_OK(MPI_Put(data, count, MPI_INT, r, 0, 1, target, win));
            MPI_Type_free(&target);
        }
    }
    MPI_Win_fence(0, win);
    if (rank != 0) {
        /* Check the window: the block holds the data, the rest is -1. */
        int k = 0, bad = 0;
        for (int i = 0; i < ROWS; i++)
            for (int j = 0; j < COLS; j++) {
                int in = i >= starts[0] && i < starts[0] + sub[0] && j >= starts[1] && j < starts[1] + sub[1];
                int want = in ? 1000 * rank + k++ : -1;
                bad += win_mem[i * COLS + j] != want;
            }
        CHECK(bad == 0, "rank %d: %d window entries wrong after MPI_Put", rank, bad);
        /* Change the block so the origin's MPI_Get can see it. */
        for (int i = 0; i < ROWS * COLS; i++)
            if (win_mem[i] != -1)
                win_mem[i] += 1;
    }
    MPI_Win_fence(0, win);
    MPI_Win_fence(0, win);
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            /* Rebuild again from the same bytes (the origin kept none). */
            int rs[2] = {1, r % (COLS - 2)};
            MPI_Datatype local;
            MPI_Type_create_subarray(2, sizes, sub, rs, MPI_ORDER_C, MPI_INT, &local);
            MPI_Aint m;
            unsigned char again[512];
            MPIX_Type_marshal("external", local, again, sizeof again, &m);
            MPI_Type_free(&local);
            MPI_Datatype target;
            MPI_OK(MPIX_Type_unmarshal("external", again, m, &target));
            MPI_Type_commit(&target);
            int got[(ROWS - 2) * 2];
            MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win);
            MPI_OK(MPI_Get(got, count, MPI_INT, r, 0, 1, target, win));
            MPI_Win_unlock(r, win);
            int bad = 0;
            for (int i = 0; i < count; i++)
                bad += got[i] != 1000 * r + i + 1;
            CHECK(bad == 0, "MPI_Get from rank %d: %d values wrong", r, bad);
            MPI_Type_free(&target);
        }
    }
    MPI_Type_free(&layout);
    MPI_Win_free(&win);
    int rc = check_report("rma", rank);
    MPI_Finalize();
    return rc;
}
