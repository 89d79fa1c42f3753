/* The main job, end to end: one MPI program archives a datatype to a file;
 * a later, separate MPI run rebuilds it from the file and uses it.
 *
 *   mpiexec -n 1 ./demo_archive write particles.mxdt
 *   mpiexec -n 2 ./demo_archive read  particles.mxdt
 *
 * The type describes an array of particles (position, velocity, id) from
 * which only some particles are selected. */
#include <mpi.h>
#include <mpix_marshal.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double pos[3];
    double vel[3];
    int id;
} particle;

static MPI_Datatype selected_particles(void)
{
    MPI_Datatype p, pr, sel;
    int bl[3] = {3, 3, 1};
    MPI_Aint d[3] = {offsetof(particle, pos), offsetof(particle, vel), offsetof(particle, id)};
    MPI_Datatype t[3] = {MPI_DOUBLE, MPI_DOUBLE, MPI_INT};
    MPI_Type_create_struct(3, bl, d, t, &p);
    MPI_Type_create_resized(p, 0, sizeof(particle), &pr);
    MPI_Type_set_name(pr, "particle");
    int blocks[3] = {2, 1, 3}, at[3] = {0, 5, 9};
    MPI_Type_indexed(3, blocks, at, pr, &sel);
    MPI_Type_set_name(sel, "selected particles");
    MPI_Type_free(&p);
    MPI_Type_free(&pr);
    return sel;
}

static void fail(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "%s: %s\n", what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rank, size, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || (strcmp(argv[1], "write") && strcmp(argv[1], "read"))) {
        if (rank == 0)
            fprintf(stderr, "usage: %s write|read FILE\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    if (strcmp(argv[1], "write") == 0) {
        MPI_Datatype t = selected_particles();
        MPI_Aint size_bound, n;
        if ((rc = MPIX_Type_marshal_size("external", t, &size_bound)))
            fail("MPIX_Type_marshal_size", rc);
        void *buf = malloc((size_t)size_bound);
        if ((rc = MPIX_Type_marshal("external", t, buf, size_bound, &n)))
            fail("MPIX_Type_marshal", rc);
        FILE *f = fopen(argv[2], "wb");
        if (!f || fwrite(buf, 1, (size_t)n, f) != (size_t)n || fclose(f))
            fail("writing the archive", MPI_ERR_IO);
        MPI_Count s;
        MPI_Type_size_x(t, &s);
        printf("archived \"selected particles\" (%lld bytes of data per element) in %ld bytes to %s\n",
               (long long)s, (long)n, argv[2]);
        MPI_Type_free(&t);
        free(buf);
    } else {
        /* Every rank reads the archive and rebuilds the type on its own. */
        FILE *f = fopen(argv[2], "rb");
        unsigned char buf[4096];
        size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
        if (f)
            fclose(f);
        MPI_Datatype t;
        if ((rc = MPIX_Type_unmarshal("external", buf, (MPI_Aint)n, &t)))
            fail("MPIX_Type_unmarshal", rc);
        MPI_Type_commit(&t);
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        MPI_Type_get_name(t, name, &len);
        particle all[12];
        memset(all, 0, sizeof all);
        if (rank == 0) {
            for (int i = 0; i < 12; i++) {
                all[i].id = 100 + i;
                for (int k = 0; k < 3; k++)
                    all[i].pos[k] = i + k / 10.0;
            }
            for (int r = 1; r < size; r++)
                MPI_Send(all, 1, t, r, 0, MPI_COMM_WORLD);
            printf("rank 0 rebuilt \"%s\" from %s (%zu bytes) and sent particles with it\n", name, argv[2], n);
        } else {
            MPI_Recv(all, 1, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int want[6] = {100, 101, 105, 109, 110, 111}, got = 0, k = 0;
            for (int i = 0; i < 12; i++)
                if (all[i].id)
                    got += all[i].id == want[k++];
            printf("rank %d rebuilt \"%s\" and received particles %d %d %d %d %d %d: %s\n", rank, name,
                   want[0], want[1], want[2], want[3], want[4], want[5], got == 6 && k == 6 ? "correct" : "WRONG");
            if (got != 6 || k != 6)
                MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Type_free(&t);
    }
    MPI_Finalize();
    return 0;
}
