! The interfaces of the C shims (fortran/mpix_marshal_f.c): Fortran
! handles as INTEGER, strings as address and length. Used by the modules
! mpix_marshal and mpix_marshal_f08; no API of its own.
module mpix_marshal_c
    use, intrinsic :: iso_c_binding, only: c_int, c_intptr_t, c_long_long, c_int64_t, c_char, c_funptr
    implicit none
    private
    public :: mpixf_marshal, mpixf_marshal_size, mpixf_unmarshal, mpixf_unregister_marshaled_keyval, &
        mpixf_signature_hash, mpixf_signature_prefix_hash, mpixf_marshaled_signature_hash, &
        mpixf_signature_count, mpixf_compare, mpixf_compare_noexpl, mpixf_error_kind, mpixf_send, &
        mpixf_recv, mpixf_recv_f08, mpixf_same_object, mpixf_bcast, mpixf_exchange_setup, &
        mpixf_reference, mpixf_resolve, mpixf_release, mpixf_exchange_set_cache_limit, mpixf_get_version, &
        mpixf_register_marshaled_keyval, f_string
    interface
        integer(c_int) function mpixf_marshal(typerep, typerep_len, type, outbuf, outsize, num_written) &
            bind(C, name="mpixf_marshal")
            import :: c_int, c_intptr_t, c_char
            character(kind=c_char), intent(in) :: typerep(*)
            integer(c_int), value :: typerep_len, type
            type(*), dimension(*) :: outbuf
            integer(c_intptr_t), value :: outsize
            integer(c_intptr_t), intent(out) :: num_written
        end function
        integer(c_int) function mpixf_marshal_size(typerep, typerep_len, type, size) &
            bind(C, name="mpixf_marshal_size")
            import :: c_int, c_intptr_t, c_char
            character(kind=c_char), intent(in) :: typerep(*)
            integer(c_int), value :: typerep_len, type
            integer(c_intptr_t), intent(out) :: size
        end function
        integer(c_int) function mpixf_unmarshal(typerep, typerep_len, inbuf, insize, type) &
            bind(C, name="mpixf_unmarshal")
            import :: c_int, c_intptr_t, c_char
            character(kind=c_char), intent(in) :: typerep(*)
            integer(c_int), value :: typerep_len
            type(*), dimension(*), intent(in) :: inbuf
            integer(c_intptr_t), value :: insize
            integer(c_int), intent(inout) :: type
        end function
        integer(c_int) function mpixf_unregister_marshaled_keyval(keyval) &
            bind(C, name="mpixf_unregister_marshaled_keyval")
            import :: c_int
            integer(c_int), value :: keyval
        end function
        integer(c_int) function mpixf_signature_hash(type, kind, hash) bind(C, name="mpixf_signature_hash")
            import :: c_int, c_int64_t
            integer(c_int), value :: type, kind
            integer(c_int64_t), intent(inout) :: hash
        end function
        integer(c_int) function mpixf_signature_prefix_hash(type, count, n, kind, hash) &
            bind(C, name="mpixf_signature_prefix_hash")
            import :: c_int, c_int64_t, c_long_long
            integer(c_int), value :: type
            integer(c_long_long), value :: count, n
            integer(c_int), value :: kind
            integer(c_int64_t), intent(inout) :: hash
        end function
        integer(c_int) function mpixf_marshaled_signature_hash(typerep, typerep_len, inbuf, insize, hash) &
            bind(C, name="mpixf_marshaled_signature_hash")
            import :: c_int, c_intptr_t, c_int64_t, c_char
            character(kind=c_char), intent(in) :: typerep(*)
            integer(c_int), value :: typerep_len
            type(*), dimension(*), intent(in) :: inbuf
            integer(c_intptr_t), value :: insize
            integer(c_int64_t), intent(inout) :: hash
        end function
        integer(c_int) function mpixf_signature_count(type, count) bind(C, name="mpixf_signature_count")
            import :: c_int, c_long_long
            integer(c_int), value :: type
            integer(c_long_long), intent(inout) :: count
        end function
        integer(c_int) function mpixf_compare(type_a, type_b, level, result, explanation, explanation_len) &
            bind(C, name="mpixf_compare")
            import :: c_int, c_char
            integer(c_int), value :: type_a, type_b, level
            integer(c_int), intent(inout) :: result
            character(kind=c_char), intent(inout) :: explanation(*)
            integer(c_int), value :: explanation_len
        end function
        ! The same C function without an explanation (a NULL pointer).
        integer(c_int) function mpixf_compare_noexpl(type_a, type_b, level, result, explanation, &
            explanation_len) bind(C, name="mpixf_compare")
            import :: c_int, c_intptr_t
            integer(c_int), value :: type_a, type_b, level
            integer(c_int), intent(inout) :: result
            integer(c_intptr_t), value :: explanation
            integer(c_int), value :: explanation_len
        end function
        integer(c_int) function mpixf_error_kind(errorcode, kind) bind(C, name="mpixf_error_kind")
            import :: c_int
            integer(c_int), value :: errorcode
            integer(c_int), intent(inout) :: kind
        end function
        integer(c_int) function mpixf_send(type, dest, tag, comm) bind(C, name="mpixf_send")
            import :: c_int
            integer(c_int), value :: type, dest, tag, comm
        end function
        integer(c_int) function mpixf_recv(type, source, tag, comm, status) bind(C, name="mpixf_recv")
            import :: c_int
            integer(c_int), intent(inout) :: type
            integer(c_int), value :: source, tag, comm
            integer(c_int), intent(inout) :: status(*)
        end function
        integer(c_int) function mpixf_recv_f08(type, source, tag, comm, status_source, status_tag, &
            status_error) bind(C, name="mpixf_recv_f08")
            import :: c_int
            integer(c_int), intent(inout) :: type
            integer(c_int), value :: source, tag, comm
            integer(c_int), intent(inout) :: status_source, status_tag, status_error
        end function
        integer(c_int) function mpixf_same_object(a, b) bind(C, name="mpixf_same_object")
            import :: c_int
            type(*) :: a, b
        end function
        integer(c_int) function mpixf_bcast(type, root, comm) bind(C, name="mpixf_bcast")
            import :: c_int
            integer(c_int), intent(inout) :: type
            integer(c_int), value :: root, comm
        end function
        integer(c_int) function mpixf_exchange_setup(comm) bind(C, name="mpixf_exchange_setup")
            import :: c_int
            integer(c_int), value :: comm
        end function
        integer(c_int) function mpixf_reference(type, dest, comm, ref) bind(C, name="mpixf_reference")
            import :: c_int
            integer(c_int), value :: type, dest, comm
            type(*), dimension(*) :: ref
        end function
        integer(c_int) function mpixf_resolve(ref, source, comm, type) bind(C, name="mpixf_resolve")
            import :: c_int
            type(*), dimension(*), intent(in) :: ref
            integer(c_int), value :: source, comm
            integer(c_int), intent(inout) :: type
        end function
        integer(c_int) function mpixf_release(type) bind(C, name="mpixf_release")
            import :: c_int
            integer(c_int), intent(inout) :: type
        end function
        integer(c_int) function mpixf_exchange_set_cache_limit(limit) &
            bind(C, name="mpixf_exchange_set_cache_limit")
            import :: c_int
            integer(c_int), value :: limit
        end function
        integer(c_int) function mpixf_get_version(major, minor, patch) bind(C, name="mpixf_get_version")
            import :: c_int
            integer(c_int), intent(inout) :: major, minor, patch
        end function
        ! The dispatchers are BIND(C) procedures of the calling module; the
        ! user's procedures come as C_FUNLOC of Fortran procedures (or
        ! C_NULL_FUNPTR when not given).
        integer(c_int) function mpixf_register_marshaled_keyval(keyval, name, name_len, size, size_fn, &
            marshal, marshal_fn, unmarshal, unmarshal_fn) bind(C, name="mpixf_register_marshaled_keyval")
            import :: c_int, c_char, c_funptr
            integer(c_int), value :: keyval, name_len
            character(kind=c_char), intent(in) :: name(*)
            type(c_funptr), value :: size, size_fn, marshal, marshal_fn, unmarshal, unmarshal_fn
        end function
    end interface
contains
    ! A C string of n characters as a Fortran CHARACTER (the dispatchers').
    pure function f_string(c, n) result(s)
        integer(c_int), intent(in) :: n
        character(kind=c_char), intent(in) :: c(n)
        character(len=n) :: s
        integer :: i
        do i = 1, n
            s(i:i) = c(i)
        end do
    end function
end module mpix_marshal_c
