/* The C side of fortran/bench/bench.f90: the same marshal and unmarshal
 * loops as the Fortran ones, calling the C API directly with the C handle
 * (converted once, outside the loop). Returns the seconds the loop took,
 * in the thread's CPU time (benchc_now, which the Fortran loops use too):
 * on the shared machine wall time counts the other jobs' time slices. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>
#include <mpi.h>
#include "mpix_marshal.h"

double benchc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The Fortran unmarshal loop's free: the handle converted, then the C call
 * (as the C loop's free, but for the conversion the binding needs anyway). */
void benchc_type_free(MPI_Fint ftype)
{
    MPI_Datatype t = MPI_Type_f2c(ftype);
    MPI_Type_free(&t);
}

double benchc_marshal(MPI_Fint ftype, int iters, void *buf, MPI_Aint size)
{
    MPI_Datatype t = MPI_Type_f2c(ftype);
    MPI_Aint n;
    double t0 = benchc_now();
    for (int i = 0; i < iters; i++)
        if (MPIX_Type_marshal("external", t, buf, size, &n) != MPI_SUCCESS)
            return -1;
    return benchc_now() - t0;
}

double benchc_unmarshal(int iters, const void *buf, MPI_Aint size, int predefined)
{
    MPI_Datatype t;
    double t0 = benchc_now();
    for (int i = 0; i < iters; i++) {
        if (MPIX_Type_unmarshal("external", buf, size, &t) != MPI_SUCCESS)
            return -1;
        if (!predefined)
            MPI_Type_free(&t);
    }
    return benchc_now() - t0;
}
