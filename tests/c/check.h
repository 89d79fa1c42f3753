/* Tiny assertion helpers shared by the C tests. Each failed CHECK prints
 * where and why and counts a failure; main returns non-zero if any did. */
#ifndef CHECK_H
#define CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>

static int check_failures = 0;
static int check_passes = 0;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (cond) {                                                               \
            check_passes++;                                                       \
        } else {                                                                  \
            check_failures++;                                                     \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);       \
            fprintf(stderr, __VA_ARGS__);                                         \
            fprintf(stderr, "\n");                                                \
        }                                                                         \
    } while (0)

#define MPI_OK(call)                                                              \
    do {                                                                          \
        int rc_ = (call);                                                         \
        if (rc_ != MPI_SUCCESS) {                                                 \
            char s_[MPI_MAX_ERROR_STRING];                                        \
            int l_;                                                               \
            MPI_Error_string(rc_, s_, &l_);                                       \
            fprintf(stderr, "FAIL %s:%d: %s returned %d: %s\n", __FILE__,         \
                    __LINE__, #call, rc_, s_);                                    \
            check_failures++;                                                     \
        } else {                                                                  \
            check_passes++;                                                       \
        }                                                                         \
    } while (0)

/* Ends a test program: prints a summary line and returns the exit code. */
static int check_report(const char *name, int rank)
{
    int mine[2] = {check_passes, check_failures}, total[2];
    MPI_Allreduce(mine, total, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d checks passed, %d failed (summed over ranks)\n", name, total[0], total[1]);
    return total[1] == 0 ? 0 : 1;
}
#endif
