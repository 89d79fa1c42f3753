/* A keyval freed with MPI_Type_free_keyval is forgotten by the library,
 * also when the program links the shared library (docs/install.md's way): the
 * library's MPI_Type_free_keyval wrapper must be the one the program calls.
 * MPICH hands a freed keyval's number to the next MPI_Type_create_keyval;
 * if the old registration survived, marshalling a type carrying the new
 * keyval's attribute would call the old keyval's callbacks with a value
 * they never set. */
#include "check.h"
#include <mpix_marshal.h>
#include <string.h>

static int old_callbacks_ran = 0;

static int old_size(int k, const char *name, const char *rep, MPI_Datatype t, MPI_Aint *size)
{
    (void)k, (void)name, (void)rep, (void)t;
    old_callbacks_ran++;
    *size = 4;
    return MPI_SUCCESS;
}

static int old_marshal(int k, const char *name, const char *rep, MPI_Datatype t, void *out, MPI_Aint outsize,
                       MPI_Aint *written)
{
    (void)k, (void)name, (void)rep, (void)t;
    old_callbacks_ran++;
    if (outsize < 4)
        return MPI_ERR_ARG;
    memcpy(out, "old!", 4);
    *written = 4;
    return MPI_SUCCESS;
}

static int old_unmarshal(int k, const char *name, const char *rep, MPI_Datatype t, const void *in, MPI_Aint n)
{
    (void)k, (void)name, (void)rep, (void)t, (void)in, (void)n;
    old_callbacks_ran++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    int a;
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &a, NULL));
    MPI_OK(MPIX_Type_register_marshaled_keyval(a, "org.mpix-marshal.test.old", old_size, old_marshal,
                                               old_unmarshal));
    int number = a;
    MPI_OK(MPI_Type_free_keyval(&a));
    CHECK(a == MPI_KEYVAL_INVALID, "MPI_Type_free_keyval did not reset the keyval");

    int c;
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &c, NULL));
    printf("keyval %d freed, next keyval %d%s\n", number, c, c == number ? " (the same number)" : "");
    static int foreign = 42;
    MPI_Datatype t;
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t));
    MPI_OK(MPI_Type_set_attr(t, c, &foreign));
    MPI_Aint n = 0;
    MPI_OK(MPIX_Type_marshal_size("external", t, &n));
    unsigned char *bytes = malloc((size_t)n);
    MPI_OK(MPIX_Type_marshal("external", t, bytes, n, &n));
    CHECK(old_callbacks_ran == 0, "the freed keyval's callbacks ran %d times", old_callbacks_ran);
    MPI_Datatype back = MPI_DATATYPE_NULL;
    MPI_OK(MPIX_Type_unmarshal("external", bytes, n, &back));
    CHECK(old_callbacks_ran == 0, "the freed keyval's callbacks ran %d times", old_callbacks_ran);
    int flag = 1;
    void *value;
    MPI_OK(MPI_Type_get_attr(back, c, &value, &flag));
    CHECK(!flag, "an attribute of an unregistered keyval arrived");
    MPI_Type_free(&back);
    MPI_Type_free(&t);
    MPI_OK(MPI_Type_free_keyval(&c));
    /* Forgotten: unregistering the old number is an invalid-argument error
     * (checked last: unregistering would hide the defect above). */
    CHECK(MPIX_Type_unregister_marshaled_keyval(number) != MPI_SUCCESS,
          "keyval %d is still registered after MPI_Type_free_keyval", number);
    free(bytes);
    int rc = check_report("keyval_free", rank);
    MPI_Finalize();
    return rc;
}
