/* The checker and the type exchange together (issue 29): the program uses
 * the exchange itself (set-up, MPIX_Type_send/recv, a broadcast) while the
 * checker uses it for its own point-to-point checks of derived types, on
 * the same communicators. Rank 0 sends each other rank a derived type
 * through the exchange, then data of that type with MPI_Send; the
 * receiver receives the data with the type it was sent. Correct, so the
 * checker must stay silent: prints "exchange_mix: checksum N". With
 * argument "wrong", rank 1 receives the data as doubles instead: the
 * checker's report names the sender's derived type. With argument
 * "partial" (3 ranks or more), ranks 0 and 1 exchange a type and the
 * others call MPI_Barrier: the exchange's first call is collective, so the
 * checker must report it as the program's collective call. */
#include <mpi.h>
#include <mpix_marshal.h>
#include <stdio.h>
#include <string.h>

#define N 6

static MPI_Datatype record(void)
{
    /* { int; double[2] } with a name, so the report can show it. */
    int lens[2] = {1, 2};
    MPI_Aint displs[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, t;
    MPI_Type_create_struct(2, lens, displs, types, &t);
    MPI_Type_set_name(t, "record");
    MPI_Type_commit(&t);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, wrong = argc > 1 && strcmp(argv[1], "wrong") == 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && strcmp(argv[1], "partial") == 0) {
        if (rank < 2) {
            MPI_Datatype t = record();
            if (rank == 0)
                MPIX_Type_send(t, 1, 1, MPI_COMM_WORLD);
            else
                MPIX_Type_recv(&t, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Type_free(&t);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return 0;
    }
    if (MPIX_Type_exchange_setup(MPI_COMM_WORLD) != MPI_SUCCESS) {
        printf("exchange_mix: set-up failed\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    struct { int i; double d[2]; } data[N];
    long sum = 0;
    if (rank == 0) {
        MPI_Datatype t = record();
        for (int k = 0; k < N; k++) {
            data[k].i = k;
            data[k].d[0] = k + 0.5;
            data[k].d[1] = -k;
        }
        for (int dest = 1; dest < size; dest++) {
            MPIX_Type_send(t, dest, 1, MPI_COMM_WORLD);
            MPI_Send(data, N, t, dest, 2, MPI_COMM_WORLD);
        }
        MPI_Type_free(&t);
    } else {
        MPI_Datatype t;
        MPIX_Type_recv(&t, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Type_commit(&t);
        if (wrong && rank == 1)
            MPI_Recv(data, 3 * N, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Recv(data, N, t, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int k = 0; k < N; k++)
            sum += data[k].i + (long)(2 * data[k].d[0]) + (long)data[k].d[1];
        MPI_Type_free(&t);
    }
    /* A broadcast through the exchange on a duplicate the program frees. */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Datatype t = rank == 0 ? record() : MPI_DATATYPE_NULL;
    MPIX_Type_bcast(&t, 0, dup);
    int size_got;
    MPI_Type_size(t, &size_got);
    sum += size_got;
    MPI_Type_free(&t);
    MPI_Comm_free(&dup);
    long total = 0;
    MPI_Reduce(&sum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("exchange_mix: checksum %ld\n", total);
    MPI_Finalize();
    return 0;
}
