! mpix-marshal for `use mpi` programs: the MPIX_ functions of mpix_marshal.h
! as subroutines like MPI's own, with INTEGER handles and a mandatory
! ierror as the last argument. Errors are raised on MPI_COMM_SELF's error
! handler by the library before they are returned (set MPI_ERRORS_RETURN
! on it to get them in ierror). The constants (MPIX_HASH_*,
! MPIX_COMPARE_*, MPIX_MARSHAL_ERR_*, ...) come from
! mpix_marshal_constants, re-exported here. For mpi_f08 programs:
! mpix_marshal_f08.
module mpix_marshal
    use, intrinsic :: iso_fortran_env, only: int8, int64
    use, intrinsic :: iso_c_binding, only: c_int, c_int8_t, c_intptr_t, c_char, c_funptr, c_null_funptr, c_funloc, &
        c_f_procpointer
    use mpi, only: MPI_ADDRESS_KIND, MPI_COUNT_KIND, MPI_STATUS_SIZE, MPI_SUCCESS
    use mpix_marshal_constants
    use mpix_marshal_c
    implicit none
    private
    public :: MPIX_Type_marshal, MPIX_Type_marshal_size, MPIX_Type_unmarshal, &
        MPIX_Type_register_marshaled_keyval, MPIX_Type_unregister_marshaled_keyval, &
        MPIX_Type_marshal_attr_size_function, MPIX_Type_marshal_attr_function, &
        MPIX_Type_unmarshal_attr_function, MPIX_Type_signature_hash, &
        MPIX_Type_signature_prefix_hash, MPIX_Type_marshaled_signature_hash, &
        MPIX_Type_signature_count, MPIX_Type_compare, MPIX_Type_marshal_error_kind, MPIX_Type_send, &
        MPIX_Type_recv, MPIX_Type_bcast, MPIX_Type_exchange_setup, MPIX_Type_reference, &
        MPIX_Type_resolve, MPIX_Type_release, MPIX_Type_exchange_set_cache_limit, &
        MPIX_Marshal_get_version
    ! The constants of mpix_marshal_constants (generated from the C header).
    include 'mpix_marshal_public.inc'
    ! The callbacks of MPIX_Type_register_marshaled_keyval, as the C
    ! header's MPIX_Type_marshal_attr_size_function, ...: ierror is
    ! MPI_SUCCESS on entry; set another code to fail the marshal.
    abstract interface
        subroutine MPIX_Type_marshal_attr_size_function(keyval, canonical_name, typerep, datatype, size, &
                ierror)
            import :: MPI_ADDRESS_KIND
            integer, intent(in) :: keyval
            character(len=*), intent(in) :: canonical_name, typerep
            integer, intent(in) :: datatype
            integer(kind=MPI_ADDRESS_KIND), intent(out) :: size
            integer, intent(inout) :: ierror
        end subroutine
        subroutine MPIX_Type_marshal_attr_function(keyval, canonical_name, typerep, datatype, outbuf, &
                outsize, num_written, ierror)
            import :: MPI_ADDRESS_KIND, int8
            integer, intent(in) :: keyval
            character(len=*), intent(in) :: canonical_name, typerep
            integer, intent(in) :: datatype
            integer(kind=MPI_ADDRESS_KIND), intent(in) :: outsize
            integer(kind=int8), intent(inout) :: outbuf(outsize)
            integer(kind=MPI_ADDRESS_KIND), intent(out) :: num_written
            integer, intent(inout) :: ierror
        end subroutine
        subroutine MPIX_Type_unmarshal_attr_function(keyval, canonical_name, typerep, datatype, inbuf, &
                insize, ierror)
            import :: MPI_ADDRESS_KIND, int8
            integer, intent(in) :: keyval
            character(len=*), intent(in) :: canonical_name, typerep
            integer, intent(in) :: datatype
            integer(kind=MPI_ADDRESS_KIND), intent(in) :: insize
            integer(kind=int8), intent(in) :: inbuf(insize)
            integer, intent(inout) :: ierror
        end subroutine
    end interface
contains
    subroutine MPIX_Type_marshal(typerep, datatype, outbuf, outsize, num_written, ierror)
        character(len=*), intent(in) :: typerep
        integer, intent(in) :: datatype
        type(*), dimension(*) :: outbuf
        integer(kind=MPI_ADDRESS_KIND), intent(in) :: outsize
        integer(kind=MPI_ADDRESS_KIND), intent(out) :: num_written
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_marshal(typerep, len(typerep), datatype, outbuf, outsize, num_written)
        ierror = rc
    end subroutine

    subroutine MPIX_Type_marshal_size(typerep, datatype, size, ierror)
        character(len=*), intent(in) :: typerep
        integer, intent(in) :: datatype
        integer(kind=MPI_ADDRESS_KIND), intent(out) :: size
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_marshal_size(typerep, len(typerep), datatype, size)
        ierror = rc
    end subroutine

    ! On error datatype is left as it was.
    subroutine MPIX_Type_unmarshal(typerep, inbuf, insize, datatype, ierror)
        character(len=*), intent(in) :: typerep
        type(*), dimension(*), intent(in) :: inbuf
        integer(kind=MPI_ADDRESS_KIND), intent(in) :: insize
        integer, intent(inout) :: datatype
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_unmarshal(typerep, len(typerep), inbuf, insize, datatype)
        ierror = rc
    end subroutine

    subroutine MPIX_Type_unregister_marshaled_keyval(type_keyval, ierror)
        integer, intent(in) :: type_keyval
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_unregister_marshaled_keyval(type_keyval)
        ierror = rc
    end subroutine

    subroutine MPIX_Type_signature_hash(datatype, kind, hash, ierror)
        integer, intent(in) :: datatype
        integer, intent(in) :: kind
        integer(kind=int64), intent(inout) :: hash
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_signature_hash(datatype, kind, hash)
        ierror = rc
    end subroutine

    subroutine MPIX_Type_signature_prefix_hash(datatype, count, n, kind, hash, ierror)
        integer, intent(in) :: datatype
        integer(kind=MPI_COUNT_KIND), intent(in) :: count, n
        integer, intent(in) :: kind
        integer(kind=int64), intent(inout) :: hash
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_signature_prefix_hash(datatype, count, n, kind, hash)
        ierror = rc
    end subroutine

    subroutine MPIX_Type_marshaled_signature_hash(typerep, inbuf, insize, hash, ierror)
        character(len=*), intent(in) :: typerep
        type(*), dimension(*), intent(in) :: inbuf
        integer(kind=MPI_ADDRESS_KIND), intent(in) :: insize
        integer(kind=int64), intent(inout) :: hash
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_marshaled_signature_hash(typerep, len(typerep), inbuf, insize, hash)
        ierror = rc
    end subroutine

    subroutine MPIX_Type_signature_count(datatype, count, ierror)
        integer, intent(in) :: datatype
        integer(kind=MPI_COUNT_KIND), intent(inout) :: count
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_signature_count(datatype, count)
        ierror = rc
    end subroutine

    ! result: 0 when equal, else the weakest level at which they differ;
    ! explanation: the first difference, blank when equal, cut to
    ! len(explanation).
    subroutine MPIX_Type_compare(type_a, type_b, level, result, explanation, ierror)
        integer, intent(in) :: type_a, type_b
        integer, intent(in) :: level
        integer, intent(inout) :: result
        character(len=*), intent(inout) :: explanation
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_compare(type_a, type_b, level, result, explanation, len(explanation))
        ierror = rc
    end subroutine

    subroutine MPIX_Type_marshal_error_kind(errorcode, kind, ierror)
        integer, intent(in) :: errorcode
        integer, intent(inout) :: kind
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_error_kind(errorcode, kind)
        ierror = rc
    end subroutine

    subroutine MPIX_Type_send(datatype, dest, tag, comm, ierror)
        integer, intent(in) :: datatype
        integer, intent(in) :: dest, tag
        integer, intent(in) :: comm
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_send(datatype, dest, tag, comm)
        ierror = rc
    end subroutine

    ! status: an INTEGER status(MPI_STATUS_SIZE) or MPI_STATUS_IGNORE; it
    ! gets MPI_SOURCE, MPI_TAG and MPI_ERROR.
    subroutine MPIX_Type_recv(datatype, source, tag, comm, status, ierror)
        integer, intent(inout) :: datatype
        integer, intent(in) :: source, tag
        integer, intent(in) :: comm
        integer :: status(MPI_STATUS_SIZE)
        integer, intent(out) :: ierror
        ierror = mpixf_recv(datatype, source, tag, comm, status)
    end subroutine

    subroutine MPIX_Type_bcast(datatype, root, comm, ierror)
        integer, intent(inout) :: datatype
        integer, intent(in) :: root
        integer, intent(in) :: comm
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_bcast(datatype, root, comm)
        ierror = rc
    end subroutine

    subroutine MPIX_Type_exchange_setup(comm, ierror)
        integer, intent(in) :: comm
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_exchange_setup(comm)
        ierror = rc
    end subroutine

    ! ref: MPIX_TYPE_REFERENCE_SIZE (16) bytes, e.g. INTEGER(INT8) :: ref(16).
    subroutine MPIX_Type_reference(datatype, dest, comm, ref, ierror)
        integer, intent(in) :: datatype
        integer, intent(in) :: dest
        integer, intent(in) :: comm
        type(*), dimension(*) :: ref
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_reference(datatype, dest, comm, ref)
        ierror = rc
    end subroutine

    subroutine MPIX_Type_resolve(ref, source, comm, datatype, ierror)
        type(*), dimension(*), intent(in) :: ref
        integer, intent(in) :: source
        integer, intent(in) :: comm
        integer, intent(inout) :: datatype
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_resolve(ref, source, comm, datatype)
        ierror = rc
    end subroutine

    subroutine MPIX_Type_release(datatype, ierror)
        integer, intent(inout) :: datatype
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_release(datatype)
        ierror = rc
    end subroutine

    subroutine MPIX_Type_exchange_set_cache_limit(limit, ierror)
        integer, intent(in) :: limit
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_exchange_set_cache_limit(limit)
        ierror = rc
    end subroutine

    subroutine MPIX_Marshal_get_version(major, minor, patch, ierror)
        integer, intent(inout) :: major, minor, patch
        integer, intent(out) :: ierror
        integer :: rc
        rc = mpixf_get_version(major, minor, patch)
        ierror = rc
    end subroutine

    ! Registers type_keyval for marshalling under canonical_name, as the C
    ! function does; each procedure is optional (a process that only reads
    ! gives unmarshal_fn alone). The procedures are called from any thread
    ! that marshals; canonical_name's trailing blanks are not part of it.
    subroutine MPIX_Type_register_marshaled_keyval(type_keyval, canonical_name, marshal_size_fn, &
            marshal_fn, unmarshal_fn, ierror)
        integer, intent(in) :: type_keyval
        character(len=*), intent(in) :: canonical_name
        procedure(MPIX_Type_marshal_attr_size_function), optional :: marshal_size_fn
        procedure(MPIX_Type_marshal_attr_function), optional :: marshal_fn
        procedure(MPIX_Type_unmarshal_attr_function), optional :: unmarshal_fn
        integer, intent(out) :: ierror
        type(c_funptr) :: s, m, u
        integer :: rc
        s = c_null_funptr
        m = c_null_funptr
        u = c_null_funptr
        if (present(marshal_size_fn)) s = c_funloc(marshal_size_fn)
        if (present(marshal_fn)) m = c_funloc(marshal_fn)
        if (present(unmarshal_fn)) u = c_funloc(unmarshal_fn)
        rc = mpixf_register_marshaled_keyval(type_keyval, canonical_name, len(canonical_name), &
            c_funloc(dispatch_size), s, c_funloc(dispatch_marshal), m, c_funloc(dispatch_unmarshal), u)
        ierror = rc
    end subroutine

    ! The dispatchers the C shim calls: the user's procedure back from its
    ! C_FUNLOC, called with Fortran strings and handles.
    integer(c_int) function dispatch_size(user, keyval, name, name_len, rep, rep_len, type, size) bind(C, name="")
        type(c_funptr), value :: user
        integer(c_int), value :: keyval, name_len, rep_len, type
        character(kind=c_char), intent(in) :: name(name_len), rep(rep_len)
        integer(c_intptr_t), intent(out) :: size
        procedure(MPIX_Type_marshal_attr_size_function), pointer :: f
        integer :: t
        integer(MPI_ADDRESS_KIND) :: s
        integer :: ierror
        call c_f_procpointer(user, f)
        t = type
        s = 0
        ierror = MPI_SUCCESS
        call f(keyval, f_string(name, name_len), f_string(rep, rep_len), t, s, ierror)
        size = s
        dispatch_size = ierror
    end function

    integer(c_int) function dispatch_marshal(user, keyval, name, name_len, rep, rep_len, type, outbuf, &
            outsize, num_written) bind(C, name="")
        type(c_funptr), value :: user
        integer(c_int), value :: keyval, name_len, rep_len, type
        character(kind=c_char), intent(in) :: name(name_len), rep(rep_len)
        integer(c_intptr_t), value :: outsize
        integer(c_int8_t), intent(inout) :: outbuf(outsize)
        integer(c_intptr_t), intent(out) :: num_written
        procedure(MPIX_Type_marshal_attr_function), pointer :: f
        integer :: t
        integer(MPI_ADDRESS_KIND) :: n
        integer :: ierror
        call c_f_procpointer(user, f)
        t = type
        n = 0
        ierror = MPI_SUCCESS
        call f(keyval, f_string(name, name_len), f_string(rep, rep_len), t, outbuf, &
            int(outsize, MPI_ADDRESS_KIND), n, ierror)
        num_written = n
        dispatch_marshal = ierror
    end function

    integer(c_int) function dispatch_unmarshal(user, keyval, name, name_len, rep, rep_len, type, inbuf, &
            insize) bind(C, name="")
        type(c_funptr), value :: user
        integer(c_int), value :: keyval, name_len, rep_len, type
        character(kind=c_char), intent(in) :: name(name_len), rep(rep_len)
        integer(c_intptr_t), value :: insize
        integer(c_int8_t), intent(in) :: inbuf(insize)
        procedure(MPIX_Type_unmarshal_attr_function), pointer :: f
        integer :: t
        integer :: ierror
        call c_f_procpointer(user, f)
        t = type
        ierror = MPI_SUCCESS
        call f(keyval, f_string(name, name_len), f_string(rep, rep_len), t, inbuf, &
            int(insize, MPI_ADDRESS_KIND), ierror)
        dispatch_unmarshal = ierror
    end function
end module mpix_marshal
