/* Erroneous uses of datatypes for mpix-check's datatype checks
 * (check/src/datatypes.rs), one per scenario (argv[1]): rank 0 sends
 * ints, the last rank receives them into a buffer whose datatype has
 * overlapping entries; the other ranks only wait. scripts/check-type-tests.sh
 * asserts the reports. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* Two blocks of two ints, one int apart: block 1's first int is block 0's
 * second (elements 1 and 2 share bytes 4..7). */
static MPI_Datatype overlapping(void) {
    MPI_Datatype t;
    MPI_Type_vector(2, 2, 1, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

/* Two ints with an extent of one: one copy is fine, the next copy's first
 * int is this copy's second. */
static MPI_Datatype short_extent(void) {
    MPI_Datatype two, t;
    MPI_Type_contiguous(2, MPI_INT, &two);
    MPI_Type_create_resized(two, 0, (MPI_Aint)sizeof(int), &t);
    MPI_Type_free(&two);
    MPI_Type_commit(&t);
    return t;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *s = argc > 1 ? argv[1] : "";
    int last = size - 1;
    int out[16] = {1, 2, 3, 4, 5, 6, 7, 8}, in[16] = {0};
    int rc = MPI_SUCCESS;
    MPI_Datatype v = overlapping(), r = short_extent();

    if (!strcmp(s, "recv")) {
        if (rank == 0) MPI_Send(out, 4, MPI_INT, last, 1, MPI_COMM_WORLD);
        if (rank == last) rc = MPI_Recv(in, 1, v, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(s, "irecv")) {
        MPI_Request q;
        if (rank == 0) MPI_Send(out, 4, MPI_INT, last, 2, MPI_COMM_WORLD);
        if (rank == last) {
            rc = MPI_Irecv(in, 1, v, 0, 2, MPI_COMM_WORLD, &q);
            if (rc == MPI_SUCCESS) MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
    } else if (!strcmp(s, "count")) {
        /* One copy is fine; three overlap. */
        if (rank == 0) MPI_Send(out, 2, MPI_INT, last, 3, MPI_COMM_WORLD);
        if (rank == last) MPI_Recv(in, 1, r, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 0) MPI_Send(out, 6, MPI_INT, last, 4, MPI_COMM_WORLD);
        if (rank == last) rc = MPI_Recv(in, 3, r, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(s, "sendrecv")) {
        /* Sending from an overlapping type is allowed; receiving is not. */
        if (rank == 0)
            MPI_Sendrecv(out, 1, v, last, 5, in, 4, MPI_INT, last, 5, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        if (rank == last)
            rc = MPI_Sendrecv(out, 4, MPI_INT, 0, 5, in, 1, v, 0, 5, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE);
    } else if (!strcmp(s, "bcast")) {
        /* The same signature (4 ints) everywhere; the last rank receives
         * into the overlapping vector. */
        rc = MPI_Bcast(rank == last ? in : out, rank == last ? 1 : 4, rank == last ? v : MPI_INT, 0,
                       MPI_COMM_WORLD);
    } else if (!strcmp(s, "allgather")) {
        /* Blocks of 2 ints: the last rank's receive type has an extent of
         * one int, so its blocks overlap. */
        MPI_Datatype two;
        MPI_Type_contiguous(2, MPI_INT, &two);
        MPI_Type_commit(&two);
        int all[64];
        rc = MPI_Allgather(out, 2, MPI_INT, all, 1, rank == last ? r : two, MPI_COMM_WORLD);
        MPI_Type_free(&two);
    } else if (!strcmp(s, "warn") || !strcmp(s, "errors_return")) {
        /* Two receives into one overlapping type: one report. */
        if (!strcmp(s, "errors_return"))
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        for (int k = 0; k < 2; k++) {
            if (rank == 0) MPI_Send(out, 4, MPI_INT, last, 6, MPI_COMM_WORLD);
            if (rank == last) {
                rc = MPI_Recv(in, 1, v, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (rc != MPI_SUCCESS) {
                    char text[MPI_MAX_ERROR_STRING];
                    int len = 0;
                    MPI_Error_string(rc, text, &len);
                    printf("rank %d: call returned an error: %s\n", rank, text);
                    /* The receive was not made: take the message. */
                    MPI_Recv(in, 4, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    printf("%s: continued after the receive (rc 0)\n", s);
                }
                fflush(stdout);
            }
        }
    }
    MPI_Type_free(&v);
    MPI_Type_free(&r);
    MPI_Finalize();
    return rc == MPI_SUCCESS ? 0 : 1;
}
