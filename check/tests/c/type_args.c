/* Datatype arguments MPI must refuse, for mpix-check's datatype checks
 * (check/src/datatypes.rs), one per scenario (argv[1]): an uncommitted,
 * freed or null type given to communication, a constructor given a
 * negative count or an unusable old type, a type freed twice, and types
 * never freed. The last rank makes the erroneous call (rank 0 in "send");
 * MPI's own error follows the report, so each scenario but "leak" ends
 * the job with a failure. scripts/check-type-tests.sh asserts the
 * reports. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *s = argc > 1 ? argv[1] : "";
    int last = size - 1, me = rank == last;
    int buf[64] = {0};
    MPI_Datatype t, u, v;

    if (!strcmp(s, "uncommitted-send")) {
        /* Rank 0 sends with a vector it never committed. */
        if (rank == 0) {
            MPI_Type_vector(2, 1, 3, MPI_INT, &t);
            MPI_Send(buf, 1, t, last, 1, MPI_COMM_WORLD);
            MPI_Type_free(&t);
        }
        if (me) MPI_Recv(buf, 2, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(s, "freed-recv")) {
        /* A copy of a freed handle, received into (from MPI_PROC_NULL:
         * nothing else waits on it). */
        if (me) {
            MPI_Type_contiguous(2, MPI_INT, &t);
            MPI_Type_commit(&t);
            u = t;
            MPI_Type_free(&t);
            MPI_Recv(buf, 1, u, MPI_PROC_NULL, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (!strcmp(s, "null-bcast")) {
        /* The last rank broadcasts with MPI_DATATYPE_NULL. */
        if (me) MPI_Bcast(buf, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
    } else if (!strcmp(s, "uncommitted-gather")) {
        /* The root's receive type was never committed (the other ranks'
         * receive type is not read). */
        t = MPI_INT;
        if (me) MPI_Type_contiguous(1, MPI_INT, &t);
        MPI_Gather(buf, 1, MPI_INT, buf + 8, 1, t, last, MPI_COMM_WORLD);
        if (me) MPI_Type_free(&t);
    } else if (!strcmp(s, "negative-count")) {
        if (me) MPI_Type_vector(-2, 1, 3, MPI_INT, &t);
    } else if (!strcmp(s, "freed-old")) {
        if (me) {
            MPI_Type_contiguous(2, MPI_INT, &t);
            u = t;
            MPI_Type_free(&t);
            if (MPI_Type_create_resized(u, 0, 16, &v) == MPI_SUCCESS) MPI_Type_free(&v);
        }
    } else if (!strcmp(s, "struct-args")) {
        if (me) {
            int bl[3] = {1, -1, 2};
            MPI_Aint d[3] = {0, 8, 16};
            MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_DATATYPE_NULL};
            MPI_Type_create_struct(3, bl, d, ty, &t);
        }
    } else if (!strcmp(s, "double-free")) {
        if (me) {
            MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &t);
            u = t;
            MPI_Type_free(&t);
            MPI_Type_free(&u);
        }
    } else if (!strcmp(s, "leak")) {
        /* Rank 0 leaks three vectors built alike and a struct; a type
         * freed, and one handed back by MPI_Type_get_contents and freed,
         * are not leaks. */
        if (rank == 0) {
            MPI_Datatype keep[3];
            for (int i = 0; i < 3; i++) {
                MPI_Type_vector(2, 1, 3, MPI_INT, &keep[i]);
                MPI_Type_commit(&keep[i]);
            }
            int bl[2] = {1, 2};
            MPI_Aint d[2] = {0, 8};
            MPI_Datatype ty[2] = {MPI_INT, keep[0]};
            MPI_Type_create_struct(2, bl, d, ty, &t);
            MPI_Type_contiguous(4, MPI_CHAR, &u);
            MPI_Type_free(&u);
            int ints[8];
            MPI_Aint addrs[8];
            MPI_Datatype types[2];
            MPI_Type_get_contents(t, 8, 8, 2, ints, addrs, types);
            MPI_Type_free(&types[1]);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    /* Only where MPI let the erroneous call pass. */
    return 1;
}
