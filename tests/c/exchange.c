/* The type exchange across processes (issue 15), under mpiexec -n 2 and
 * -n 4 (and as two processes of different builds, see scripts/c-tests.sh):
 * rank 0 sends types to every other rank twice (description, then
 * reference); each receiver rebuilds the same types locally and compares
 * them with MPIX_Type_compare at the names level; wildcards and status;
 * broadcasts; an intercommunicator; a duplicate communicator freed; and
 * no datatype handle left behind (tests/c/leakcount.h counts them). */
#include "check.h"
#include "leakcount.h"
#include "types.h"
#include <mpix_marshal.h>
#include <string.h>

#define NTYPES 5

static MPI_Datatype make(int k)
{
    switch (k) {
    case 0: return paper_indexed();
    case 1: return hdf5_complex();
    case 2: return named_struct();
    case 3: return subarray_type();
    default: return shared_member_struct();
    }
}

static void expect_equal(MPI_Datatype got, int k, const char *what)
{
    MPI_Datatype want = make(k);
    int result = -1;
    char why[256] = "";
    MPI_OK(MPIX_Type_compare(want, got, MPIX_COMPARE_NAMES, &result, why, sizeof why));
    CHECK(result == 0, "%s: type %d differs: %s", what, k, why);
    MPI_Type_free(&want);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    long base = live_types;

    /* 1. Point to point, twice per type; wildcard receives the second time. */
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    for (int round = 0; round < 2; round++) {
        for (int k = 0; k < NTYPES; k++) {
            if (rank == 0) {
                MPI_Datatype t = make(k);
                for (int dest = 1; dest < size; dest++)
                    MPI_OK(MPIX_Type_send(t, dest, 100 + k, comm));
                MPI_Type_free(&t);
            } else {
                MPI_Datatype got = MPI_DATATYPE_NULL;
                MPI_Status st;
                /* One wildcard at a time: a receive with both would also
                 * match a neighbour's message of part 2 (the ring), which
                 * may already be on its way. */
                if (round == 0)
                    MPI_OK(MPIX_Type_recv(&got, 0, 100 + k, comm, &st));
                else if (k % 2 == 0)
                    MPI_OK(MPIX_Type_recv(&got, MPI_ANY_SOURCE, 100 + k, comm, &st));
                else
                    MPI_OK(MPIX_Type_recv(&got, 0, MPI_ANY_TAG, comm, &st));
                CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 100 + k, "status source %d tag %d", st.MPI_SOURCE,
                      st.MPI_TAG);
                expect_equal(got, k, round == 0 ? "first receive" : "wildcard receive");
                /* The rebuilt type moves data. */
                MPI_Type_commit(&got);
                MPI_Type_free(&got);
            }
        }
    }

    /* 2. Every rank sends to its right neighbour: a ring of exchanges,
     * received with MPI_ANY_SOURCE. */
    {
        MPI_Datatype t = make(rank % NTYPES);
        MPI_Request req;
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        /* A type is sent with MPIX_Type_send while a plain message on the
         * same communicator and tag is pending: they do not mix. */
        int plain = 1000 + rank, back = -1;
        MPI_Isend(&plain, 1, MPI_INT, right, 7, comm, &req);
        MPI_OK(MPIX_Type_send(t, right, 7, comm));
        MPI_Datatype got;
        MPI_Status st;
        MPI_OK(MPIX_Type_recv(&got, MPI_ANY_SOURCE, 7, comm, &st));
        CHECK(st.MPI_SOURCE == left, "ring: source %d, expected %d", st.MPI_SOURCE, left);
        expect_equal(got, left % NTYPES, "ring");
        MPI_Recv(&back, 1, MPI_INT, left, 7, comm, MPI_STATUS_IGNORE);
        CHECK(back == 1000 + left, "ring: the plain message is %d", back);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Type_free(&got);
        MPI_Type_free(&t);
    }

    /* 3. Broadcast from every root, twice each (description, reference). */
    for (int round = 0; round < 2; round++) {
        for (int root = 0; root < size; root++) {
            int k = (root + round) % NTYPES;
            MPI_Datatype t = rank == root ? make(k) : MPI_DATATYPE_NULL;
            MPI_Datatype mine = t;
            MPI_OK(MPIX_Type_bcast(&t, root, comm));
            if (rank == root)
                CHECK(t == mine, "the root's handle changed");
            expect_equal(t, k, "broadcast");
            MPI_Type_free(&t);
        }
    }
    /* A predefined type is itself everywhere. */
    {
        MPI_Datatype t = rank == 0 ? MPI_DOUBLE : MPI_DATATYPE_NULL;
        MPI_OK(MPIX_Type_bcast(&t, 0, comm));
        CHECK(t == MPI_DOUBLE, "MPI_DOUBLE came back as another handle");
    }
    MPI_Comm_free(&comm);

    /* 4. An intercommunicator: even ranks send to the odd rank of the same
     * pair, in the remote group's numbering. */
    if (size % 2 == 0) {
        MPI_Comm half, inter;
        int color = rank % 2;
        MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 9, &inter);
        int local;
        MPI_Comm_rank(half, &local);
        for (int k = 0; k < 2; k++) {
            if (color == 0) {
                MPI_Datatype t = make(k + 2);
                MPI_OK(MPIX_Type_send(t, local, 5, inter));
                MPI_Type_free(&t);
            } else {
                MPI_Datatype got;
                MPI_Status st;
                MPI_OK(MPIX_Type_recv(&got, MPI_ANY_SOURCE, 5, inter, &st));
                CHECK(st.MPI_SOURCE == local, "intercomm: source %d", st.MPI_SOURCE);
                expect_equal(got, k + 2, "intercommunicator");
                MPI_Type_free(&got);
            }
        }
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }

    /* 5. The cache's bound: limit 2, five types, each sent twice in a row
     * and then all again: evictions announced by the sender keep the
     * receiver in step. */
    {
        MPI_OK(MPIX_Type_exchange_set_cache_limit(2));
        MPI_Comm small;
        MPI_Comm_dup(MPI_COMM_WORLD, &small);
        for (int pass = 0; pass < 2; pass++) {
            for (int k = 0; k < NTYPES; k++) {
                for (int twice = 0; twice < 2; twice++) {
                    if (rank == 0) {
                        MPI_Datatype t = make(k);
                        for (int dest = 1; dest < size; dest++)
                            MPI_OK(MPIX_Type_send(t, dest, k, small));
                        MPI_Type_free(&t);
                    } else {
                        MPI_Datatype got;
                        MPI_OK(MPIX_Type_recv(&got, 0, k, small, MPI_STATUS_IGNORE));
                        expect_equal(got, k, "bounded cache");
                        MPI_Type_free(&got);
                    }
                }
            }
        }
        MPI_Comm_free(&small);
        MPI_OK(MPIX_Type_exchange_set_cache_limit(64));
    }

    /* 6. Bad arguments: a rank out of range, NULL output. */
    {
        int rc = MPIX_Type_send(MPI_INT, size + 3, 0, MPI_COMM_WORLD);
        int kind = -1;
        MPIX_Type_marshal_error_kind(rc, &kind);
        CHECK(rc != MPI_SUCCESS && kind == MPIX_MARSHAL_ERR_INVALID_ARGUMENT, "dest out of range: rc %d kind %d",
              rc, kind);
        rc = MPIX_Type_recv(NULL, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPIX_Type_marshal_error_kind(rc, &kind);
        CHECK(kind == MPIX_MARSHAL_ERR_INVALID_ARGUMENT, "NULL type: kind %d", kind);
    }

    CHECK(live_types == base, "%ld datatype handles left behind", live_types - base);
    int rc = check_report("exchange", rank);
    MPI_Finalize();
    return rc;
}
