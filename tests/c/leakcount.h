/* Counts live derived datatype handles through the MPI profiling interface:
 * every constructor and MPI_Type_get_contents (which returns new references)
 * adds, MPI_Type_free subtracts. The library calls these functions through
 * the dynamic linker, so the definitions below intercept its calls too. */
#ifndef LEAKCOUNT_H
#define LEAKCOUNT_H
#include <mpi.h>

static long live_types = 0;

#define WRAP(name, params, args)                                                  \
    int name params                                                               \
    {                                                                             \
        int rc = P##name args;                                                    \
        if (rc == MPI_SUCCESS)                                                    \
            live_types++;                                                         \
        return rc;                                                                \
    }

WRAP(MPI_Type_contiguous, (int c, MPI_Datatype o, MPI_Datatype *n), (c, o, n))
WRAP(MPI_Type_vector, (int c, int b, int s, MPI_Datatype o, MPI_Datatype *n), (c, b, s, o, n))
WRAP(MPI_Type_create_hvector, (int c, int b, MPI_Aint s, MPI_Datatype o, MPI_Datatype *n), (c, b, s, o, n))
WRAP(MPI_Type_indexed, (int c, const int b[], const int d[], MPI_Datatype o, MPI_Datatype *n), (c, b, d, o, n))
WRAP(MPI_Type_create_hindexed, (int c, const int b[], const MPI_Aint d[], MPI_Datatype o, MPI_Datatype *n),
     (c, b, d, o, n))
WRAP(MPI_Type_create_indexed_block, (int c, int b, const int d[], MPI_Datatype o, MPI_Datatype *n), (c, b, d, o, n))
WRAP(MPI_Type_create_hindexed_block, (int c, int b, const MPI_Aint d[], MPI_Datatype o, MPI_Datatype *n),
     (c, b, d, o, n))
WRAP(MPI_Type_create_struct, (int c, const int b[], const MPI_Aint d[], const MPI_Datatype t[], MPI_Datatype *n),
     (c, b, d, t, n))
WRAP(MPI_Type_create_subarray,
     (int k, const int s[], const int ss[], const int st[], int o, MPI_Datatype t, MPI_Datatype *n),
     (k, s, ss, st, o, t, n))
WRAP(MPI_Type_create_darray,
     (int sz, int r, int k, const int g[], const int di[], const int da[], const int p[], int o, MPI_Datatype t,
      MPI_Datatype *n),
     (sz, r, k, g, di, da, p, o, t, n))
WRAP(MPI_Type_create_resized, (MPI_Datatype o, MPI_Aint lb, MPI_Aint e, MPI_Datatype *n), (o, lb, e, n))
WRAP(MPI_Type_dup, (MPI_Datatype o, MPI_Datatype *n), (o, n))

#if MPI_VERSION >= 4
WRAP(MPI_Type_contiguous_c, (MPI_Count c, MPI_Datatype o, MPI_Datatype *n), (c, o, n))
WRAP(MPI_Type_vector_c, (MPI_Count c, MPI_Count b, MPI_Count s, MPI_Datatype o, MPI_Datatype *n), (c, b, s, o, n))
WRAP(MPI_Type_create_hvector_c, (MPI_Count c, MPI_Count b, MPI_Count s, MPI_Datatype o, MPI_Datatype *n),
     (c, b, s, o, n))
WRAP(MPI_Type_indexed_c, (MPI_Count c, const MPI_Count b[], const MPI_Count d[], MPI_Datatype o, MPI_Datatype *n),
     (c, b, d, o, n))
WRAP(MPI_Type_create_hindexed_c,
     (MPI_Count c, const MPI_Count b[], const MPI_Count d[], MPI_Datatype o, MPI_Datatype *n), (c, b, d, o, n))
WRAP(MPI_Type_create_indexed_block_c, (MPI_Count c, MPI_Count b, const MPI_Count d[], MPI_Datatype o, MPI_Datatype *n),
     (c, b, d, o, n))
WRAP(MPI_Type_create_hindexed_block_c,
     (MPI_Count c, MPI_Count b, const MPI_Count d[], MPI_Datatype o, MPI_Datatype *n), (c, b, d, o, n))
WRAP(MPI_Type_create_struct_c,
     (MPI_Count c, const MPI_Count b[], const MPI_Count d[], const MPI_Datatype t[], MPI_Datatype *n),
     (c, b, d, t, n))
WRAP(MPI_Type_create_subarray_c,
     (int k, const MPI_Count s[], const MPI_Count ss[], const MPI_Count st[], int o, MPI_Datatype t,
      MPI_Datatype *n),
     (k, s, ss, st, o, t, n))
WRAP(MPI_Type_create_darray_c,
     (int sz, int r, int k, const MPI_Count g[], const int di[], const int da[], const int p[], int o,
      MPI_Datatype t, MPI_Datatype *n),
     (sz, r, k, g, di, da, p, o, t, n))
WRAP(MPI_Type_create_resized_c, (MPI_Datatype o, MPI_Count lb, MPI_Count e, MPI_Datatype *n), (o, lb, e, n))
#endif

#if defined(MPICH)
WRAP(MPI_Type_hvector, (int c, int b, MPI_Aint s, MPI_Datatype o, MPI_Datatype *n), (c, b, s, o, n))
WRAP(MPI_Type_hindexed, (int c, int b[], MPI_Aint d[], MPI_Datatype o, MPI_Datatype *n), (c, b, d, o, n))
WRAP(MPI_Type_struct, (int c, int b[], MPI_Aint d[], MPI_Datatype t[], MPI_Datatype *n), (c, b, d, t, n))
#endif
#undef WRAP

int MPI_Type_free(MPI_Datatype *t)
{
    int rc = PMPI_Type_free(t);
    if (rc == MPI_SUCCESS)
        live_types--;
    return rc;
}

/* Whether a handle is derived (not predefined, not an F90 type). */
static int is_derived(MPI_Datatype t)
{
    int combiner;
#if MPI_VERSION >= 4
    MPI_Count ni, na, nc, nd;
    PMPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &combiner);
#else
    int ni, na, nd;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
#endif
    return combiner != MPI_COMBINER_NAMED && combiner != MPI_COMBINER_F90_REAL &&
           combiner != MPI_COMBINER_F90_COMPLEX && combiner != MPI_COMBINER_F90_INTEGER;
}

/* Handles get_contents returns are new references unless predefined. */
static void count_returned(int n, MPI_Datatype *types)
{
    for (int i = 0; i < n; i++) {
        live_types += is_derived(types[i]);
    }
}
#if 0
{
    {
        int combiner;
#if MPI_VERSION >= 4
        MPI_Count ni, na, nc, nd;
        PMPI_Type_get_envelope_c(types[i], &ni, &na, &nc, &nd, &combiner);
#else
        int ni, na, nd;
        PMPI_Type_get_envelope(types[i], &ni, &na, &nd, &combiner);
#endif
        if (combiner != MPI_COMBINER_NAMED && combiner != MPI_COMBINER_F90_REAL &&
            combiner != MPI_COMBINER_F90_COMPLEX && combiner != MPI_COMBINER_F90_INTEGER)
            live_types++;
    }
}
#endif

int MPI_Type_get_contents(MPI_Datatype t, int ni, int na, int nd, int i[], MPI_Aint a[], MPI_Datatype d[])
{
    int rc = PMPI_Type_get_contents(t, ni, na, nd, i, a, d);
    if (rc == MPI_SUCCESS)
        count_returned(nd, d);
    return rc;
}

#if MPI_VERSION >= 4
int MPI_Type_get_contents_c(MPI_Datatype t, MPI_Count ni, MPI_Count na, MPI_Count nc, MPI_Count nd, int i[],
                            MPI_Aint a[], MPI_Count c[], MPI_Datatype d[])
{
    int rc = PMPI_Type_get_contents_c(t, ni, na, nc, nd, i, a, c, d);
    if (rc == MPI_SUCCESS)
        count_returned((int)nd, d);
    return rc;
}
#endif
#endif
