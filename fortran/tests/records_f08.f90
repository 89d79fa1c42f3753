! The Fortran bindings' test, `use mpi_f08` (scripts/fortran-tests.sh).
! A SEQUENCE record with array members, its MPI struct type, archived with
! MPIX_Type_marshal and read back with MPIX_Type_unmarshal:
!   records_f08 write FILE   (one process) archives the record's type
!   records_f08 read FILE [typemap]   (two processes) reads an archive (this
!       program's, or records_c's, or Python's: the same type), compares it
!       by names (with "typemap": by typemap, for an archive of the type
!       made by the large-count constructors, as mpi4py makes it) with the
!       type built again, rank 0 sends records with the original type and
!       rank 1 receives them with the unmarshalled one; then the type
!       exchange, the signatures and the errors (a corrupt archive gives
!       the library's code and kind in ierror, no abort).
! Prints "ok: N checks" and exits 0, or names the failed check and stops 1.
! The callbacks of a keyval marshalled from Fortran: the attribute, an
! address-sized integer, travels as its 8 bytes and is set again on the
! rebuilt type. Counts its calls.
module records_f08_attr
    use mpi_f08
    use, intrinsic :: iso_fortran_env, only: int8
    implicit none
    integer :: calls = 0
contains
    subroutine attr_size(keyval, canonical_name, typerep, datatype, size, ierror)
        integer, intent(in) :: keyval
        character(len=*), intent(in) :: canonical_name, typerep
        type(MPI_Datatype), intent(in) :: datatype
        integer(kind=MPI_ADDRESS_KIND), intent(out) :: size
        integer, intent(inout) :: ierror
        calls = calls + 1
        size = 8
        if (canonical_name /= 'org.example.tag' .or. typerep /= 'external') ierror = MPI_ERR_OTHER
    end subroutine
    subroutine attr_marshal(keyval, canonical_name, typerep, datatype, outbuf, outsize, num_written, ierror)
        integer, intent(in) :: keyval
        character(len=*), intent(in) :: canonical_name, typerep
        type(MPI_Datatype), intent(in) :: datatype
        integer(kind=MPI_ADDRESS_KIND), intent(in) :: outsize
        integer(kind=int8), intent(inout) :: outbuf(outsize)
        integer(kind=MPI_ADDRESS_KIND), intent(out) :: num_written
        integer, intent(inout) :: ierror
        integer(kind=MPI_ADDRESS_KIND) :: val
        logical :: flag
        calls = calls + 1
        call MPI_Type_get_attr(datatype, keyval, val, flag)
        if (.not. flag .or. outsize < 8) ierror = MPI_ERR_OTHER
        outbuf(1:8) = transfer(val, outbuf(1:8))
        num_written = 8
    end subroutine
    subroutine attr_unmarshal(keyval, canonical_name, typerep, datatype, inbuf, insize, ierror)
        integer, intent(in) :: keyval
        character(len=*), intent(in) :: canonical_name, typerep
        type(MPI_Datatype), intent(in) :: datatype
        integer(kind=MPI_ADDRESS_KIND), intent(in) :: insize
        integer(kind=int8), intent(in) :: inbuf(insize)
        integer, intent(inout) :: ierror
        calls = calls + 1
        if (insize /= 8) ierror = MPI_ERR_OTHER
        call MPI_Type_set_attr(datatype, keyval, transfer(inbuf(1:8), 0_MPI_ADDRESS_KIND))
    end subroutine
end module records_f08_attr

program records_f08
    use records_f08_attr
    use mpi_f08
    use mpix_marshal_f08
    use, intrinsic :: iso_fortran_env, only: int8, int64
    implicit none
    type record
        sequence
        real(8) :: values(3)
        integer :: id
        integer :: flags(4)
        integer :: pad
    end type record
    integer, parameter :: nrec = 5
    type(record) :: recs(nrec)
    type(MPI_Datatype) :: orig, back, got
    type(MPI_Status) :: status
    integer :: rank, nprocs, ierr, res, i, kind, checks
    character(len=16) :: mode, level_arg
    integer :: level
    character(len=256) :: path
    character(len=200) :: why
    integer(int8), allocatable :: buf(:)
    integer(MPI_ADDRESS_KIND) :: nbytes, written, lb, extent, lb2, extent2
    integer(MPI_COUNT_KIND) :: count
    integer(int64) :: hash, hash2
    integer(int8) :: ref(MPIX_TYPE_REFERENCE_SIZE)
    integer :: major, minor, patch, tsize, tsize2

    checks = 0
    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    ! The library raises its errors on MPI_COMM_SELF: return them instead.
    call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)
    call get_command_argument(1, mode)
    call get_command_argument(2, path)
    call get_command_argument(3, level_arg)
    level = MPIX_COMPARE_NAMES
    if (level_arg == 'typemap') level = MPIX_COMPARE_TYPEMAP
    orig = record_type()

    select case (trim(mode))
    case ('write')
        call MPIX_Type_marshal_size('external', orig, nbytes, ierr)
        call check(ierr == MPI_SUCCESS .and. nbytes > 0, 'marshal_size')
        allocate (buf(nbytes))
        call MPIX_Type_marshal(MPIX_TYPEREP_EXTERNAL, orig, buf, nbytes, written, ierr)
        call check(ierr == MPI_SUCCESS .and. written > 0 .and. written <= nbytes, 'marshal')
        open (10, file=trim(path), access='stream', form='unformatted', status='replace')
        write (10) buf(1:written)
        close (10)
    case ('read')
        call read_file(trim(path), buf)
        nbytes = int(ubound(buf, 1), MPI_ADDRESS_KIND)
        back = MPI_DATATYPE_NULL
        call MPIX_Type_unmarshal('external', buf, nbytes, back, ierr)
        call check(ierr == MPI_SUCCESS .and. back /= MPI_DATATYPE_NULL, 'unmarshal')
        call MPI_Type_commit(back)
        ! The same type: by names (the strongest level but attributes; or by
        ! typemap, as asked), size, extent.
        why = 'x'
        call MPIX_Type_compare(orig, back, level, res, why, ierr)
        call check(ierr == MPI_SUCCESS .and. res == 0 .and. why == ' ', 'compare: '//trim(why))
        call MPI_Type_size(orig, tsize)
        call MPI_Type_size(back, tsize2)
        call check(tsize == tsize2 .and. tsize == 8*3 + 4*5, 'size')
        call MPI_Type_get_extent(orig, lb, extent)
        call MPI_Type_get_extent(back, lb2, extent2)
        call check(lb == lb2 .and. extent == extent2 .and. extent == storage_size(recs(1))/8, 'extent')
        ! Signatures: the archive's hash is the type's; 8 basic elements.
        call MPIX_Type_marshaled_signature_hash('external', buf, nbytes, hash, ierr)
        call check(ierr == MPI_SUCCESS, 'marshaled_signature_hash')
        call MPIX_Type_signature_hash(back, MPIX_HASH_DEFAULT, hash2, ierr)
        call check(ierr == MPI_SUCCESS .and. hash == hash2, 'signature_hash')
        call MPIX_Type_signature_count(back, count, ierr)
        call check(ierr == MPI_SUCCESS .and. count == 8, 'signature_count')
        call MPIX_Type_signature_prefix_hash(orig, 1_MPI_COUNT_KIND, 8_MPI_COUNT_KIND, MPIX_HASH_DEFAULT, hash2, ierr)
        call check(ierr == MPI_SUCCESS .and. hash == hash2, 'signature_prefix_hash')
        ! The other representations, through the constants and with trailing blanks.
        call roundtrip(MPIX_TYPEREP_COMPRESSED)
        call roundtrip(MPIX_TYPEREP_INTERNAL//'   ')
        ! A type that differs: the explanation says where.
        call MPIX_Type_compare(orig, MPI_INTEGER, MPIX_COMPARE_TYPEMAP, res, why, ierr)
        call check(ierr == MPI_SUCCESS .and. res /= 0 .and. why /= ' ', 'compare different')
        call MPIX_Type_compare(orig, back, MPIX_COMPARE_TYPEMAP, res) ! no explanation, no ierror
        call check(res == 0, 'compare without explanation')

        ! Data: rank 0 sends with the original type, rank 1 receives with the unmarshalled one.
        if (nprocs >= 2) then
            if (rank == 0) then
                call fill(recs)
                call MPI_Send(recs, nrec, orig, 1, 7, MPI_COMM_WORLD)
            else if (rank == 1) then
                recs = record(-1d0, -1, -1, -1)
                call MPI_Recv(recs, nrec, back, 0, 7, MPI_COMM_WORLD, status)
                do i = 1, nrec
                    call check(recs(i)%id == i .and. all(recs(i)%values == [i*1.5d0, i*2.5d0, -i*1d0]) &
                               .and. all(recs(i)%flags == [i, 2*i, 3*i, 4*i]) .and. recs(i)%pad == -1, 'received data')
                end do
            end if
            call exchange(orig)
        end if

        ! Errors come back in ierror with the library's kind, and the handle is left alone.
        if (rank == 0) then
            got = MPI_DATATYPE_NULL
            buf(nbytes/2) = not(buf(nbytes/2))
            call MPIX_Type_unmarshal('external', buf, nbytes, got, ierr)
            call check(ierr /= MPI_SUCCESS .and. got == MPI_DATATYPE_NULL, 'corrupt archive refused')
            call MPIX_Type_marshal_error_kind(ierr, kind)
            call check(kind == MPIX_MARSHAL_ERR_CHECKSUM .or. kind == MPIX_MARSHAL_ERR_CORRUPT, 'corrupt kind')
            call MPIX_Type_unmarshal('external', buf, nbytes - 3, got, ierr)
            call MPIX_Type_marshal_error_kind(ierr, kind, ierror=res)
            call check(res == MPI_SUCCESS .and. kind /= MPIX_MARSHAL_ERR_NONE .and. got == MPI_DATATYPE_NULL, &
                       'truncated archive refused')
            call MPIX_Type_unmarshal('no such rep', buf, nbytes, got, ierr)
            call MPIX_Type_marshal_error_kind(ierr, kind)
            call check(kind == MPIX_MARSHAL_ERR_UNKNOWN_REPRESENTATION, 'unknown representation')
            call MPIX_Type_marshal('external', orig, buf, 2_MPI_ADDRESS_KIND, written, ierr)
            call MPIX_Type_marshal_error_kind(ierr, kind)
            call check(kind == MPIX_MARSHAL_ERR_BUFFER_TOO_SMALL .and. written == 0, 'buffer too small')
            call MPIX_Type_marshal_error_kind(MPI_ERR_TYPE, kind)
            call check(kind == MPIX_MARSHAL_ERR_NONE, 'an MPI error is no kind of ours')
            call MPIX_Type_unmarshal('external', buf, nbytes, got) ! no ierror: MPI_ERRORS_RETURN drops it
            call check(got == MPI_DATATYPE_NULL, 'error without ierror')
            call MPIX_Marshal_get_version(major, minor, patch, ierr)
            call check(ierr == MPI_SUCCESS .and. major == MPIX_MARSHAL_VERSION_MAJOR .and. &
                       minor == MPIX_MARSHAL_VERSION_MINOR, 'version')
        end if
        call MPI_Type_free(back)
        call keyval_roundtrip()
    case default
        call check(.false., 'usage: records_f08 write|read FILE')
    end select
    call MPI_Type_free(orig)
    print '(a,i0,a,i0)', 'ok: ', checks, ' checks, rank ', rank
    call MPI_Finalize()
contains
    ! A keyval registered with Fortran callbacks: its attribute goes into
    ! the archive and comes back on the rebuilt type.
    subroutine keyval_roundtrip()
        type(MPI_Datatype) :: t, copy
        integer :: keyval, ierr
        integer(MPI_ADDRESS_KIND) :: val, n, w
        integer(int8), allocatable :: bytes(:)
        logical :: flag
        call MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, keyval, 0_MPI_ADDRESS_KIND)
        call MPIX_Type_register_marshaled_keyval(keyval, 'org.example.tag', attr_size, attr_marshal, &
                                                 attr_unmarshal, ierr)
        call check(ierr == MPI_SUCCESS, 'register_marshaled_keyval')
        call MPI_Type_contiguous(3, MPI_INTEGER, t)
        call MPI_Type_set_attr(t, keyval, 4242_MPI_ADDRESS_KIND)
        calls = 0
        call MPIX_Type_marshal_size('external', t, n, ierr)
        allocate (bytes(n))
        call MPIX_Type_marshal('external', t, bytes, n, w, ierr)
        call check(ierr == MPI_SUCCESS .and. calls >= 2, 'marshal through the Fortran callbacks')
        calls = 0
        call MPIX_Type_unmarshal('external', bytes, w, copy, ierr)
        call check(ierr == MPI_SUCCESS .and. calls == 1, 'unmarshal through the Fortran callback')
        call MPI_Type_get_attr(copy, keyval, val, flag)
        call check(flag .and. val == 4242, 'the attribute on the rebuilt type')
        call MPIX_Type_unregister_marshaled_keyval(keyval, ierr)
        call check(ierr == MPI_SUCCESS, 'unregister_marshaled_keyval')
        calls = 0
        call MPIX_Type_marshal('external', t, bytes, n, w, ierr)
        call check(ierr == MPI_SUCCESS .and. calls == 0, 'no callback once unregistered')
        call MPI_Type_free(copy)
        call MPI_Type_free(t)
        call MPI_Type_free_keyval(keyval)
    end subroutine

    ! The record's type, built from the addresses of one record's members.
    function record_type() result(t)
        type(MPI_Datatype) :: t, s
        type(record) :: r(2)
        integer(MPI_ADDRESS_KIND) :: base, d(3), next
        call MPI_Get_address(r(1), base)
        call MPI_Get_address(r(1)%values, d(1))
        call MPI_Get_address(r(1)%id, d(2))
        call MPI_Get_address(r(1)%flags, d(3))
        call MPI_Get_address(r(2), next)
        d = d - base
        call MPI_Type_create_struct(3, [3, 1, 4], d, [MPI_DOUBLE_PRECISION, MPI_INTEGER, MPI_INTEGER], s)
        call MPI_Type_create_resized(s, 0_MPI_ADDRESS_KIND, next - base, t)
        call MPI_Type_free(s)
        call MPI_Type_set_name(t, 'record')
        call MPI_Type_commit(t)
    end function

    subroutine roundtrip(rep)
        character(len=*), intent(in) :: rep
        integer(int8) :: bytes(4096)
        integer(MPI_ADDRESS_KIND) :: need, n
        type(MPI_Datatype) :: t
        integer :: ierr, res
        call MPIX_Type_marshal_size(rep, orig, need, ierr)
        call check(ierr == MPI_SUCCESS .and. need <= size(bytes), 'marshal_size '//rep)
        call MPIX_Type_marshal(rep, orig, bytes, int(size(bytes), MPI_ADDRESS_KIND), n, ierr)
        call check(ierr == MPI_SUCCESS .and. n <= need, 'marshal '//rep)
        call MPIX_Type_unmarshal(rep, bytes, n, t, ierr)
        call check(ierr == MPI_SUCCESS, 'unmarshal '//rep)
        call MPIX_Type_compare(orig, t, MPIX_COMPARE_NAMES, res)
        call check(res == 0, 'the same type through '//rep)
        call MPI_Type_free(t)
    end subroutine

    subroutine fill(r)
        type(record), intent(out) :: r(:)
        integer :: i
        do i = 1, size(r)
            r(i) = record([i*1.5d0, i*2.5d0, -i*1d0], i, [i, 2*i, 3*i, 4*i], 99)
        end do
    end subroutine

    ! The type exchange between ranks 0 and 1 (the others take part in the collectives).
    subroutine exchange(t)
        type(MPI_Datatype), intent(in) :: t
        type(MPI_Datatype) :: r
        integer :: ierr, res
        call MPIX_Type_exchange_setup(MPI_COMM_WORLD, ierr)
        call check(ierr == MPI_SUCCESS, 'exchange_setup')
        call MPIX_Type_exchange_set_cache_limit(64, ierr)
        call check(ierr == MPI_SUCCESS, 'set_cache_limit')
        if (rank == 0) then
            call MPIX_Type_send(t, 1, 3, MPI_COMM_WORLD, ierr)
            call check(ierr == MPI_SUCCESS, 'send')
            call MPIX_Type_reference(t, 1, MPI_COMM_WORLD, ref, ierr)
            call check(ierr == MPI_SUCCESS, 'reference')
            call MPI_Send(ref, MPIX_TYPE_REFERENCE_SIZE, MPI_BYTE, 1, 4, MPI_COMM_WORLD)
        else if (rank == 1) then
            r = MPI_DATATYPE_NULL
            call MPIX_Type_recv(r, 0, 3, MPI_COMM_WORLD, status, ierr)
            call check(ierr == MPI_SUCCESS .and. status%MPI_SOURCE == 0 .and. status%MPI_TAG == 3, 'recv')
            call MPIX_Type_compare(t, r, MPIX_COMPARE_NAMES, res, ierror=ierr)
            call check(ierr == MPI_SUCCESS .and. res == 0, 'recv: the same type')
            call MPI_Type_free(r)
            call MPI_Recv(ref, MPIX_TYPE_REFERENCE_SIZE, MPI_BYTE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
            call MPIX_Type_resolve(ref, 0, MPI_COMM_WORLD, r, ierr)
            call check(ierr == MPI_SUCCESS, 'resolve')
            call MPIX_Type_compare(t, r, MPIX_COMPARE_NAMES, res)
            call check(res == 0, 'resolve: the same type')
            call MPIX_Type_release(r, ierr)
            call check(ierr == MPI_SUCCESS .and. r == MPI_DATATYPE_NULL, 'release')
        end if
        ! Again with MPI_STATUS_IGNORE, then the broadcast.
        if (rank == 0) then
            call MPIX_Type_send(t, 1, 5, MPI_COMM_WORLD)
        else if (rank == 1) then
            call MPIX_Type_recv(r, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
            call check(ierr == MPI_SUCCESS, 'recv, MPI_STATUS_IGNORE')
            call MPI_Type_free(r)
        end if
        r = MPI_DATATYPE_NULL
        if (rank == 0) r = t
        call MPIX_Type_bcast(r, 0, MPI_COMM_WORLD, ierr)
        call check(ierr == MPI_SUCCESS .and. r /= MPI_DATATYPE_NULL, 'bcast')
        call MPIX_Type_compare(t, r, MPIX_COMPARE_NAMES, res)
        call check(res == 0, 'bcast: the same type')
        if (rank /= 0) call MPI_Type_free(r)
    end subroutine

    subroutine read_file(name, bytes)
        character(len=*), intent(in) :: name
        integer(int8), allocatable, intent(out) :: bytes(:)
        integer :: n
        open (11, file=name, access='stream', form='unformatted', status='old', action='read')
        inquire (11, size=n)
        allocate (bytes(n))
        read (11) bytes
        close (11)
    end subroutine

    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        if (.not. ok) then
            print '(a,i0,a,a)', 'FAILED on rank ', rank, ': ', what
            call MPI_Abort(MPI_COMM_WORLD, 1)
        end if
        checks = checks + 1
    end subroutine
end program records_f08
