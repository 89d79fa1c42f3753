/* Erroneous point-to-point programs for mpix-check's signature checks
 * (MPIX_CHECK_P2P=1), one per scenario (argv[1]): rank 0 sends, the last
 * rank receives with a signature that does not match; the other ranks
 * only wait. scripts/check-p2p-tests.sh asserts the reports. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static MPI_Datatype pair(MPI_Datatype a, MPI_Datatype b) {
    MPI_Datatype t;
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    MPI_Datatype ty[2] = {a, b};
    MPI_Type_create_struct(2, bl, d, ty, &t);
    MPI_Type_commit(&t);
    return t;
}

/* A user's error handler (the trunc_* scenarios with "user"). */
static void user_handler(MPI_Comm *comm, int *code, ...) {
    int cls = 0;
    (void)comm;
    MPI_Error_class(*code, &cls);
    printf("user handler called: %s\n", cls == MPI_ERR_TRUNCATE ? "MPI_ERR_TRUNCATE" : "another class");
    fflush(stdout);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *s = argc > 1 ? argv[1] : "";
    int last = size - 1;
    double buf[64] = {0};
    int rc = MPI_SUCCESS;
    MPI_Status st;

    if (!strcmp(s, "int_float")) {
        if (rank == 0) MPI_Send(buf, 1, MPI_INT, last, 7, MPI_COMM_WORLD);
        if (rank == last) rc = MPI_Recv(buf, 1, MPI_FLOAT, 0, 7, MPI_COMM_WORLD, &st);
#if MPI_VERSION >= 4 || defined(MPICH_NUMVERSION) || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
    } else if (!strcmp(s, "partitioned")) {
        /* Partitioned messages around a ring (every rank: Open MPI 5's first
         * partitioned call on a communicator is collective), then a regular
         * one of the same tag received with MPI_ANY_TAG as the wrong type:
         * still paired, still reported. */
        MPI_Request r[2];
        int parts[8] = {0}, pin[8];
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        MPI_Psend_init(parts, 2, 4, MPI_INT, right, 23, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
        MPI_Precv_init(pin, 2, 4, MPI_INT, left, 23, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
        MPI_Startall(2, r);
        MPI_Pready_range(0, 1, r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        MPI_Wait(&r[1], MPI_STATUS_IGNORE);
        MPI_Request_free(&r[0]);
        MPI_Request_free(&r[1]);
        if (rank == 0) MPI_Send(buf, 1, MPI_INT, last, 23, MPI_COMM_WORLD);
        if (rank == last) rc = MPI_Recv(buf, 1, MPI_FLOAT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
#endif
    } else if (!strcmp(s, "struct_order")) {
        MPI_Datatype a = pair(MPI_INT, MPI_DOUBLE), b = pair(MPI_DOUBLE, MPI_INT);
        if (rank == 0) MPI_Ssend(buf, 1, a, last, 3, MPI_COMM_WORLD);
        if (rank == last) rc = MPI_Recv(buf, 1, b, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Type_free(&a);
        MPI_Type_free(&b);
    } else if (!strcmp(s, "int_bytes")) {
        if (rank == 0) MPI_Send(buf, 1, MPI_INT, last, 0, MPI_COMM_WORLD);
        if (rank == last)
            rc = MPI_Recv(buf, (int)sizeof(int), MPI_BYTE, 0, 0, MPI_COMM_WORLD, &st);
    } else if (!strcmp(s, "wildcards")) {
        /* tag 1: an int, tag 2: a double; the last rank takes tag 2 first,
         * right, then "any tag" as a float: the int of tag 1. */
        if (rank == 0) {
            MPI_Send(buf, 1, MPI_INT, last, 1, MPI_COMM_WORLD);
            MPI_Send(buf, 1, MPI_DOUBLE, last, 2, MPI_COMM_WORLD);
        }
        if (rank == last) {
            MPI_Recv(buf, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st);
            rc = MPI_Recv(buf, 1, MPI_FLOAT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        }
    } else if (!strcmp(s, "irecv_wait")) {
        if (rank == 0) {
            MPI_Request r;
            MPI_Isend(buf, 2, MPI_DOUBLE, last, 4, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        if (rank == last) {
            MPI_Request r;
            MPI_Irecv(buf, 4, MPI_INT, 0, 4, MPI_COMM_WORLD, &r);
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
    } else if (!strcmp(s, "probe_recv")) {
        if (rank == 0) MPI_Send(buf, 3, MPI_DOUBLE, last, 9, MPI_COMM_WORLD);
        if (rank == last) {
            int n;
            MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_DOUBLE, &n);
            rc = MPI_Recv(buf, 2 * n, MPI_FLOAT, 0, st.MPI_TAG, MPI_COMM_WORLD, &st);
        }
    } else if (!strcmp(s, "sendrecv")) {
        if (rank == 0 || rank == last) {
            int peer = rank == 0 ? last : 0;
            double in[4];
            MPI_Datatype rt = rank == last ? MPI_LONG : MPI_DOUBLE;
            rc = MPI_Sendrecv(buf, 1, MPI_DOUBLE, peer, 5, in, 1, rt, peer, 5, MPI_COMM_WORLD,
                              &st);
        }
    } else if (!strcmp(s, "persistent")) {
        MPI_Request r;
        if (rank == 0) MPI_Send_init(buf, 2, MPI_INT, last, 6, MPI_COMM_WORLD, &r);
        if (rank == last) MPI_Recv_init(buf, 2, MPI_INT, 0, 6, MPI_COMM_WORLD, &r);
        if (rank == 0 || rank == last) {
            MPI_Start(&r); /* right */
            MPI_Wait(&r, &st);
            MPI_Request_free(&r);
        }
        if (rank == 0) MPI_Send_init(buf, 2, MPI_SHORT, last, 6, MPI_COMM_WORLD, &r);
        if (rank == last) MPI_Recv_init(buf, 2, MPI_INT, 0, 6, MPI_COMM_WORLD, &r);
        if (rank == 0 || rank == last) {
            MPI_Start(&r); /* wrong */
            rc = MPI_Wait(&r, &st);
            MPI_Request_free(&r);
        }
    } else if (!strcmp(s, "mrecv")) {
        if (rank == 0) MPI_Send(buf, 1, MPI_INT, last, 8, MPI_COMM_WORLD);
        if (rank == last) {
            MPI_Message m;
            MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st);
            rc = MPI_Mrecv(buf, 1, MPI_UNSIGNED, &m, &st);
        }
    } else if (!strcmp(s, "huge")) {
        MPI_Datatype huge;
        MPI_Type_vector(1000000, 1000, 1000, MPI_INT, &huge);
        MPI_Type_commit(&huge);
        if (rank == 0) MPI_Send(buf, 3, MPI_FLOAT, last, 2, MPI_COMM_WORLD);
        if (rank == last) rc = MPI_Recv(buf, 1, huge, 0, 2, MPI_COMM_WORLD, &st);
        MPI_Type_free(&huge);
    } else if (!strcmp(s, "errors_return")) {
        /* The report raised on a communicator that returns errors: the
           call returns the point-to-point checker's own code and string. */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if (rank == 0) MPI_Send(buf, 2, MPI_INT, last, 11, MPI_COMM_WORLD);
        if (rank == last) {
            rc = MPI_Recv(buf, 2, MPI_FLOAT, 0, 11, MPI_COMM_WORLD, &st);
            int cls = 0;
            MPI_Error_class(rc, &cls);
            printf("errors_return: the class is %s\n",
                   cls == MPI_ERR_OTHER || cls == MPI_SUCCESS ? "a predefined one" : "its own");
            fflush(stdout);
        }
    } else if (!strcmp(s, "large_count")) {
        /* The MPI-4 large-count forms, checked as the others. */
#if MPI_VERSION >= 4
        if (rank == 0) MPI_Send_c(buf, 3, MPI_INT, last, 12, MPI_COMM_WORLD);
        if (rank == last) rc = MPI_Recv_c(buf, 3, MPI_FLOAT, 0, 12, MPI_COMM_WORLD, &st);
#else
        if (rank == 0) printf("large_count: no MPI_Send_c before MPI 4\n");
#endif
    } else if (!strcmp(s, "isendrecv")) {
        /* MPI-4's nonblocking Sendrecv: checked at its Wait. */
#if MPI_VERSION >= 4
        if (rank == 0) MPI_Send(buf, 2, MPI_INT, last, 13, MPI_COMM_WORLD);
        if (rank == last) {
            MPI_Request q;
            MPI_Isendrecv(buf, 0, MPI_INT, MPI_PROC_NULL, 0, buf, 2, MPI_DOUBLE, 0, 13,
                          MPI_COMM_WORLD, &q);
            rc = MPI_Wait(&q, &st);
        }
#endif
    } else if (!strcmp(s, "intercomm")) {
        /* Even and odd ranks form two groups; rank 0 of the even group
         * sends an int to rank 0 of the odd group, which receives a float
         * with a wildcard source. */
        MPI_Comm local, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 20, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_ARE_FATAL);
        if (rank == 0) MPI_Send(buf, 1, MPI_INT, 0, 21, inter);
        if (rank == 1) rc = MPI_Recv(buf, 1, MPI_FLOAT, MPI_ANY_SOURCE, 21, inter, &st);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    } else if (!strcmp(s, "dist_graph")) {
        /* A ring as a distributed graph: each rank sends an int to its
         * right neighbour, which receives an unsigned. */
        MPI_Comm g;
        int right = (rank + 1) % size, left = (rank + size - 1) % size, one = 1;
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, &one, 1, &right, &one,
                                       MPI_INFO_NULL, 0, &g);
        MPI_Comm_set_name(g, "ring");
        MPI_Comm_set_errhandler(g, MPI_ERRORS_ARE_FATAL);
        if (rank == 0) MPI_Send(buf, 1, MPI_INT, 1, 22, g);
        if (rank == 1) rc = MPI_Recv(buf, 1, MPI_UNSIGNED, 0, 22, g, &st);
        MPI_Comm_free(&g);
    } else if (!strncmp(s, "trunc_", 6)) {
        /* Issue 29: a message larger than its receive (4 MPI_INT into 2,
         * or 2 MPI_DOUBLE into 2 MPI_INT: "types"): MPI fails the receive
         * (MPI_ERR_TRUNCATE). argv[2]: the handler of MPI_COMM_WORLD, MPI's
         * default ("fatal"), MPI_ERRORS_RETURN ("return") or a user function
         * ("user", freed by the program once set). */
        const char *how = argc > 2 ? argv[2] : "fatal";
        if (!strcmp(how, "return")) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if (!strcmp(how, "user")) {
            MPI_Errhandler eh;
            MPI_Comm_create_errhandler(user_handler, &eh);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
            MPI_Errhandler_free(&eh);
        }
        int ints[4] = {1, 2, 3, 4};
        double two[2] = {1.0, 2.0};
        if (rank == 0) {
            if (!strcmp(s, "trunc_types"))
                MPI_Send(two, 2, MPI_DOUBLE, last, 31, MPI_COMM_WORLD);
            else
                MPI_Send(ints, 4, MPI_INT, last, 31, MPI_COMM_WORLD);
            MPI_Send(ints, 1, MPI_INT, last, 32, MPI_COMM_WORLD);
        }
        if (rank == last) {
            int got[4] = {0, 0, 0, 0};
            if (!strcmp(s, "trunc_recv") || !strcmp(s, "trunc_types")) {
                rc = MPI_Recv(got, 2, MPI_INT, 0, 31, MPI_COMM_WORLD, &st);
            } else if (!strcmp(s, "trunc_irecv")) {
                MPI_Request q;
                MPI_Irecv(got, 2, MPI_INT, 0, 31, MPI_COMM_WORLD, &q);
                rc = MPI_Wait(&q, &st);
            } else if (!strcmp(s, "trunc_waitall")) {
                MPI_Request q[2];
                MPI_Status sts[2];
                MPI_Irecv(got, 2, MPI_INT, 0, 31, MPI_COMM_WORLD, &q[0]);
                MPI_Irecv(got + 2, 1, MPI_INT, 0, 32, MPI_COMM_WORLD, &q[1]);
                sts[0].MPI_ERROR = sts[1].MPI_ERROR = MPI_SUCCESS;
                rc = MPI_Waitall(2, q, sts);
                /* (MPICH 5.0 returns MPI_SUCCESS after a user's handler.) */
                if (rc == MPI_ERR_IN_STATUS || sts[0].MPI_ERROR != MPI_SUCCESS) {
                    /* MPICH stops at the failed one: the other is pending. */
                    if (sts[1].MPI_ERROR == MPI_ERR_PENDING) MPI_Wait(&q[1], MPI_STATUS_IGNORE);
                    rc = sts[0].MPI_ERROR;
                }
            } else if (!strcmp(s, "trunc_sendrecv")) {
                rc = MPI_Sendrecv(ints, 0, MPI_INT, MPI_PROC_NULL, 0, got, 2, MPI_INT, 0, 31,
                                  MPI_COMM_WORLD, &st);
            }
            int cls = -1;
            MPI_Error_class(rc, &cls);
            printf("%s: the call returned %s\n", s,
                   cls == MPI_ERR_TRUNCATE ? "MPI_ERR_TRUNCATE" : "another class");
            if (strcmp(s, "trunc_waitall"))
                MPI_Recv(got, 1, MPI_INT, 0, 32, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            printf("%s: went on (%d)\n", s, got[0]);
            fflush(stdout);
            rc = MPI_SUCCESS;
        }
    } else if (!strcmp(s, "warn")) {
        if (rank == 0) MPI_Send(buf, 1, MPI_INT, last, 7, MPI_COMM_WORLD);
        if (rank == last) {
            rc = MPI_Recv(buf, 1, MPI_FLOAT, 0, 7, MPI_COMM_WORLD, &st);
            printf("warn: continued after the report (rc %d, source %d, tag %d)\n", rc,
                   st.MPI_SOURCE, st.MPI_TAG);
            fflush(stdout);
        }
    } else if (!strcmp(s, "late")) {
        /* The third message differs (an int taken as a float: the same
         * size, MPI sees nothing), then 1000 correct ones on three tags:
         * the report must still name receive #3 and its line, at once
         * (immediate) or when the batch holding its entry arrives
         * (batched). */
        for (int i = 0; i < 1003 && rc == MPI_SUCCESS; i++) {
            if (rank == 0) MPI_Send(buf, 1, MPI_INT, last, i % 3, MPI_COMM_WORLD);
            if (rank == last)
                rc = MPI_Recv(buf, 1, i == 2 ? MPI_FLOAT : MPI_INT, 0, i % 3, MPI_COMM_WORLD, &st);
        }
    } else if (!strcmp(s, "struct_repeat")) {
        /* One named derived type in three messages (one batch in the
         * batched mode, where only the first companion's type reference
         * is counted): the third is received as another type, and the
         * report still names the sender's type. */
        MPI_Datatype a = pair(MPI_INT, MPI_DOUBLE), b = pair(MPI_DOUBLE, MPI_INT);
        MPI_Type_set_name(a, "int_double");
        if (rank == 0)
            for (int i = 0; i < 3; i++) MPI_Send(buf, 1, a, last, 3, MPI_COMM_WORLD);
        if (rank == last) {
            MPI_Recv(buf, 1, a, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(buf, 1, a, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            rc = MPI_Recv(buf, 1, b, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Type_free(&a);
        MPI_Type_free(&b);
    } else if (!strcmp(s, "freed_repeat") || !strcmp(s, "renamed_repeat")) {
        /* A derived type freed after its message and another made in its
         * place (MPI gives it the same handle, MPICH at least), or the
         * type renamed, before the next message: the second message's
         * report names the second type. Nonblocking sends completed by
         * MPI_Test, the receives after a barrier: nothing sends the
         * batched mode's batch between the two (a lasting wait would), so
         * both companions go in one. */
        int renamed = !strcmp(s, "renamed_repeat");
        MPI_Datatype a, c;
        MPI_Request r = MPI_REQUEST_NULL;
        int done = 0;
        MPI_Type_contiguous(3, MPI_INT, &a);
        MPI_Type_commit(&a);
        MPI_Type_set_name(a, "first");
        if (rank == 0) {
            MPI_Isend(buf, 1, a, last, 3, MPI_COMM_WORLD, &r);
            while (!done) MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        }
        if (renamed) {
            c = a;
        } else {
            MPI_Type_free(&a);
            MPI_Type_contiguous(2, MPI_INT, &c);
            MPI_Type_commit(&c);
        }
        MPI_Type_set_name(c, "second");
        if (rank == 0) MPI_Isend(buf + 2, 1, c, last, 3, MPI_COMM_WORLD, &r);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (rank == last) {
            MPI_Recv(buf, 3, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            rc = MPI_Recv(buf, renamed ? 3 : 2, MPI_FLOAT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Type_free(&c);
    } else {
        if (rank == 0) fprintf(stderr, "unknown scenario %s\n", s);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        printf("rank %d: call returned an error: %s\n", rank, msg);
    }
    MPI_Finalize();
    return 0;
}
