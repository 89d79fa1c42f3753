/* The type exchange across processes (issue 15), under mpiexec -n 2 and
 * -n 4 (and as two processes of different builds, see scripts/c-tests.sh):
 * rank 0 sends types to every other rank twice (description, then
 * reference); each receiver rebuilds the same types locally and compares
 * them with MPIX_Type_compare at the names level; wildcards and status;
 * broadcasts; an intercommunicator (sends, a broadcast across the groups,
 * references); references carried in the user's own messages, resolved
 * and released; a duplicate communicator freed; and no datatype handle
 * left behind (tests/c/leakcount.h counts them). */
#include "check.h"
#include "leakcount.h"
#include "types.h"
#include <mpix_marshal.h>
#include <stdlib.h>
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
        /* A broadcast across the groups, as MPI_Bcast does it: group 0's
         * first process is the root (MPI_ROOT), the rest of its group
         * passes MPI_PROC_NULL, group 1 passes the root's rank, 0. Twice
         * per type: description, then reference. */
        for (int round = 0; round < 4; round++) {
            int k = round / 2;
            MPI_Datatype t = MPI_DATATYPE_NULL, mine = MPI_DATATYPE_NULL;
            int root = color == 1 ? 0 : local == 0 ? MPI_ROOT : MPI_PROC_NULL;
            if (root == MPI_ROOT)
                t = mine = make(k);
            MPI_OK(MPIX_Type_bcast(&t, root, inter));
            if (color == 1) {
                expect_equal(t, k, "intercommunicator broadcast");
                MPI_Type_free(&t);
            } else {
                CHECK(t == mine, "intercommunicator broadcast: the root group's handle changed");
                if (root == MPI_ROOT)
                    MPI_Type_free(&t);
            }
        }
        /* A reference carried in the user's own message on the
         * intercommunicator, resolved by the remote process. */
        for (int round = 0; round < 3; round++) {
            char msg[MPIX_TYPE_REFERENCE_SIZE];
            if (color == 0) {
                MPI_Datatype t = make(round % 2 + 3);
                MPI_OK(MPIX_Type_reference(t, local, inter, msg));
                MPI_Send(msg, sizeof msg, MPI_BYTE, local, 6, inter);
                MPI_Type_free(&t);
            } else {
                MPI_Datatype got = MPI_DATATYPE_NULL;
                MPI_Recv(msg, sizeof msg, MPI_BYTE, local, 6, inter, MPI_STATUS_IGNORE);
                MPI_OK(MPIX_Type_resolve(msg, local, inter, &got));
                expect_equal(got, round % 2 + 3, "intercommunicator reference");
                MPI_OK(MPIX_Type_release(&got));
                CHECK(got == MPI_DATATYPE_NULL, "release left the handle");
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

    /* 6. References in the user's own messages (an active message: the
     * reference, then an int of payload), from every rank to every other,
     * each type three times, received with MPI_ANY_SOURCE: the receiver
     * resolves with the status's source, and the lent handle moves data. */
    {
        MPI_Comm am;
        MPI_Comm_dup(MPI_COMM_WORLD, &am);
        /* Set up here (twice: the second does nothing), so the references
         * below need no collective step. */
        MPI_OK(MPIX_Type_exchange_setup(am));
        MPI_OK(MPIX_Type_exchange_setup(am));
        struct {
            char ref[MPIX_TYPE_REFERENCE_SIZE];
            int k;
        } msg;
        for (int round = 0; round < 3 * NTYPES; round++) {
            int k = round % NTYPES;
            MPI_Datatype t = make(k);
            for (int dest = 0; dest < size; dest++) {
                if (dest == rank)
                    continue;
                MPI_OK(MPIX_Type_reference(t, dest, am, msg.ref));
                msg.k = k;
                MPI_Send(&msg, sizeof msg, MPI_BYTE, dest, 11, am);
            }
            MPI_Type_free(&t);
            for (int n = 1; n < size; n++) {
                MPI_Status st;
                MPI_Recv(&msg, sizeof msg, MPI_BYTE, MPI_ANY_SOURCE, 11, am, &st);
                MPI_Datatype got = MPI_DATATYPE_NULL;
                MPI_OK(MPIX_Type_resolve(msg.ref, st.MPI_SOURCE, am, &got));
                expect_equal(got, msg.k, "resolved reference");
                int bytes = 0, pos = 0;
                MPI_Type_size(got, &bytes);
                char *packed = malloc((size_t)bytes + 1);
                MPI_Aint lb, extent;
                MPI_Type_get_true_extent(got, &lb, &extent);
                char *data = calloc(1, (size_t)extent + 1);
                CHECK(MPI_Pack(data - lb, 1, got, packed, bytes + 1, &pos, MPI_COMM_SELF) == MPI_SUCCESS &&
                          pos == bytes,
                      "the lent type does not pack (%d of %d bytes)", pos, bytes);
                free(data);
                free(packed);
                MPI_OK(MPIX_Type_release(&got));
            }
        }
        /* Releasing twice, or a handle never lent, is refused. */
        MPI_Datatype t = make(0), copy = t;
        int rc = MPIX_Type_release(&copy), kind = -1;
        MPIX_Type_marshal_error_kind(rc, &kind);
        CHECK(kind == MPIX_MARSHAL_ERR_INVALID_ARGUMENT && copy == t, "release of a handle never lent: kind %d",
              kind);
        MPI_Type_free(&t);
        MPI_Comm_free(&am);
    }

    /* 7. Bad arguments: a rank out of range, NULL output. */
    {
        int rc = MPIX_Type_send(MPI_INT, size + 3, 0, MPI_COMM_WORLD);
        int kind = -1;
        MPIX_Type_marshal_error_kind(rc, &kind);
        CHECK(rc != MPI_SUCCESS && kind == MPIX_MARSHAL_ERR_INVALID_ARGUMENT, "dest out of range: rc %d kind %d",
              rc, kind);
        rc = MPIX_Type_exchange_setup(MPI_COMM_NULL);
        MPIX_Type_marshal_error_kind(rc, &kind);
        CHECK(rc != MPI_SUCCESS && kind == MPIX_MARSHAL_ERR_INVALID_ARGUMENT, "setup of MPI_COMM_NULL: kind %d",
              kind);
        rc = MPIX_Type_recv(NULL, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPIX_Type_marshal_error_kind(rc, &kind);
        CHECK(kind == MPIX_MARSHAL_ERR_INVALID_ARGUMENT, "NULL type: kind %d", kind);
    }

    CHECK(live_types == base, "%ld datatype handles left behind", live_types - base);
    int rc = check_report("exchange", rank);
    MPI_Finalize();
    return rc;
}
