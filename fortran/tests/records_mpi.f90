! The Fortran bindings' test, `use mpi` (INTEGER handles, ierror last and
! mandatory), the same record and modes as records_f08.f90:
!   records_mpi write FILE   (one process)
!   records_mpi read FILE    (two processes)
! The callbacks of a keyval marshalled from Fortran: the attribute, an
! address-sized integer, travels as its 8 bytes and is set again on the
! rebuilt type. Counts its calls.
module records_mpi_attr
    use mpi
    use, intrinsic :: iso_fortran_env, only: int8
    implicit none
    integer :: calls = 0
contains
    subroutine attr_size(keyval, canonical_name, typerep, datatype, size, ierror)
        integer, intent(in) :: keyval
        character(len=*), intent(in) :: canonical_name, typerep
        integer, intent(in) :: datatype
        integer(kind=MPI_ADDRESS_KIND), intent(out) :: size
        integer, intent(inout) :: ierror
        calls = calls + 1
        size = 8
        if (canonical_name /= 'org.example.tag' .or. typerep /= 'external') ierror = MPI_ERR_OTHER
    end subroutine
    subroutine attr_marshal(keyval, canonical_name, typerep, datatype, outbuf, outsize, num_written, ierror)
        integer, intent(in) :: keyval
        character(len=*), intent(in) :: canonical_name, typerep
        integer, intent(in) :: datatype
        integer(kind=MPI_ADDRESS_KIND), intent(in) :: outsize
        integer(kind=int8), intent(inout) :: outbuf(outsize)
        integer(kind=MPI_ADDRESS_KIND), intent(out) :: num_written
        integer, intent(inout) :: ierror
        integer(kind=MPI_ADDRESS_KIND) :: val
        logical :: flag
        calls = calls + 1
        call MPI_Type_get_attr(datatype, keyval, val, flag, ierror)
        if (.not. flag .or. outsize < 8) ierror = MPI_ERR_OTHER
        outbuf(1:8) = transfer(val, outbuf(1:8))
        num_written = 8
    end subroutine
    subroutine attr_unmarshal(keyval, canonical_name, typerep, datatype, inbuf, insize, ierror)
        integer, intent(in) :: keyval
        character(len=*), intent(in) :: canonical_name, typerep
        integer, intent(in) :: datatype
        integer(kind=MPI_ADDRESS_KIND), intent(in) :: insize
        integer(kind=int8), intent(in) :: inbuf(insize)
        integer, intent(inout) :: ierror
        calls = calls + 1
        if (insize /= 8) ierror = MPI_ERR_OTHER
        call MPI_Type_set_attr(datatype, keyval, transfer(inbuf(1:8), 0_MPI_ADDRESS_KIND), ierror)
    end subroutine
end module records_mpi_attr

program records_mpi
    use records_mpi_attr
    use mpi
    use mpix_marshal
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
    integer :: orig, back, got, r
    integer :: status(MPI_STATUS_SIZE)
    integer :: rank, nprocs, ierr, res, i, kind, checks, tsize, tsize2
    character(len=16) :: mode
    character(len=256) :: path
    character(len=200) :: why
    integer(int8), allocatable :: buf(:)
    integer(MPI_ADDRESS_KIND) :: size, written, lb, extent, lb2, extent2
    integer(MPI_COUNT_KIND) :: count
    integer(int64) :: hash, hash2

    checks = 0
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN, ierr)
    call get_command_argument(1, mode)
    call get_command_argument(2, path)
    orig = record_type()

    select case (trim(mode))
    case ('write')
        call MPIX_Type_marshal_size('external', orig, size, ierr)
        call check(ierr == MPI_SUCCESS .and. size > 0, 'marshal_size')
        allocate (buf(size))
        call MPIX_Type_marshal('external', orig, buf, size, written, ierr)
        call check(ierr == MPI_SUCCESS .and. written > 0 .and. written <= size, 'marshal')
        open (10, file=trim(path), access='stream', form='unformatted', status='replace')
        write (10) buf(1:written)
        close (10)
    case ('read')
        call read_file(trim(path), buf)
        size = int(ubound(buf, 1), MPI_ADDRESS_KIND)
        back = MPI_DATATYPE_NULL
        call MPIX_Type_unmarshal('external', buf, size, back, ierr)
        call check(ierr == MPI_SUCCESS .and. back /= MPI_DATATYPE_NULL, 'unmarshal')
        call MPI_Type_commit(back, ierr)
        call MPIX_Type_compare(orig, back, MPIX_COMPARE_NAMES, res, why, ierr)
        call check(ierr == MPI_SUCCESS .and. res == 0 .and. why == ' ', 'compare: '//trim(why))
        call MPI_Type_size(orig, tsize, ierr)
        call MPI_Type_size(back, tsize2, ierr)
        call check(tsize == tsize2 .and. tsize == 8*3 + 4*5, 'size')
        call MPI_Type_get_extent(orig, lb, extent, ierr)
        call MPI_Type_get_extent(back, lb2, extent2, ierr)
        call check(lb == lb2 .and. extent == extent2 .and. extent == storage_size(recs(1))/8, 'extent')
        call MPIX_Type_marshaled_signature_hash('external', buf, size, hash, ierr)
        call MPIX_Type_signature_hash(back, MPIX_HASH_DEFAULT, hash2, ierr)
        call check(ierr == MPI_SUCCESS .and. hash == hash2, 'signature_hash')
        call MPIX_Type_signature_count(back, count, ierr)
        call check(ierr == MPI_SUCCESS .and. count == 8, 'signature_count')
        call MPIX_Type_compare(orig, MPI_INTEGER, MPIX_COMPARE_SIGNATURE, res, why, ierr)
        call check(ierr == MPI_SUCCESS .and. res == MPIX_COMPARE_SIGNATURE .and. why /= ' ', 'compare different')

        if (nprocs >= 2) then
            if (rank == 0) then
                do i = 1, nrec
                    recs(i) = record([i*1.5d0, i*2.5d0, -i*1d0], i, [i, 2*i, 3*i, 4*i], 99)
                end do
                call MPI_Send(recs, nrec, orig, 1, 7, MPI_COMM_WORLD, ierr)
                call MPIX_Type_send(orig, 1, 3, MPI_COMM_WORLD, ierr)
                call check(ierr == MPI_SUCCESS, 'send')
            else if (rank == 1) then
                recs = record(-1d0, -1, -1, -1)
                call MPI_Recv(recs, nrec, back, 0, 7, MPI_COMM_WORLD, status, ierr)
                do i = 1, nrec
                    call check(recs(i)%id == i .and. all(recs(i)%values == [i*1.5d0, i*2.5d0, -i*1d0]) &
                               .and. all(recs(i)%flags == [i, 2*i, 3*i, 4*i]) .and. recs(i)%pad == -1, 'received data')
                end do
                r = MPI_DATATYPE_NULL
                call MPIX_Type_recv(r, 0, 3, MPI_COMM_WORLD, status, ierr)
                call check(ierr == MPI_SUCCESS .and. status(MPI_SOURCE) == 0 .and. status(MPI_TAG) == 3, 'recv')
                call MPIX_Type_compare(orig, r, MPIX_COMPARE_NAMES, res, why, ierr)
                call check(res == 0, 'recv: the same type')
                call MPI_Type_free(r, ierr)
            end if
            if (rank == 0) then
                call MPIX_Type_send(orig, 1, 5, MPI_COMM_WORLD, ierr)
            else if (rank == 1) then
                call MPIX_Type_recv(r, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
                call check(ierr == MPI_SUCCESS, 'recv, MPI_STATUS_IGNORE')
                call MPI_Type_free(r, ierr)
            end if
            r = MPI_DATATYPE_NULL
            if (rank == 0) r = orig
            call MPIX_Type_bcast(r, 0, MPI_COMM_WORLD, ierr)
            call MPIX_Type_compare(orig, r, MPIX_COMPARE_NAMES, res, why, ierr)
            call check(ierr == MPI_SUCCESS .and. res == 0, 'bcast')
            if (rank /= 0) call MPI_Type_free(r, ierr)
        end if

        if (rank == 0) then
            got = MPI_DATATYPE_NULL
            buf(size/2) = not(buf(size/2))
            call MPIX_Type_unmarshal('external', buf, size, got, ierr)
            call check(ierr /= MPI_SUCCESS .and. got == MPI_DATATYPE_NULL, 'corrupt archive refused')
            call MPIX_Type_marshal_error_kind(ierr, kind, res)
            call check(res == MPI_SUCCESS .and. (kind == MPIX_MARSHAL_ERR_CHECKSUM .or. &
                       kind == MPIX_MARSHAL_ERR_CORRUPT), 'corrupt kind')
        end if
        call MPI_Type_free(back, ierr)
        call keyval_roundtrip()
    case default
        call check(.false., 'usage: records_mpi write|read FILE')
    end select
    call MPI_Type_free(orig, ierr)
    print '(a,i0,a,i0)', 'ok: ', checks, ' checks, rank ', rank
    call MPI_Finalize(ierr)
contains
    ! A keyval registered with Fortran callbacks: its attribute goes into
    ! the archive and comes back on the rebuilt type.
    subroutine keyval_roundtrip()
        integer :: t, copy
        integer :: keyval, ierr
        integer(MPI_ADDRESS_KIND) :: val, n, w
        integer(int8), allocatable :: bytes(:)
        logical :: flag
        call MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, keyval, 0_MPI_ADDRESS_KIND, ierr)
        call MPIX_Type_register_marshaled_keyval(keyval, 'org.example.tag', attr_size, attr_marshal, &
                                                 attr_unmarshal, ierr)
        call check(ierr == MPI_SUCCESS, 'register_marshaled_keyval')
        call MPI_Type_contiguous(3, MPI_INTEGER, t, ierr)
        call MPI_Type_set_attr(t, keyval, 4242_MPI_ADDRESS_KIND, ierr)
        calls = 0
        call MPIX_Type_marshal_size('external', t, n, ierr)
        allocate (bytes(n))
        call MPIX_Type_marshal('external', t, bytes, n, w, ierr)
        call check(ierr == MPI_SUCCESS .and. calls >= 2, 'marshal through the Fortran callbacks')
        calls = 0
        call MPIX_Type_unmarshal('external', bytes, w, copy, ierr)
        call check(ierr == MPI_SUCCESS .and. calls == 1, 'unmarshal through the Fortran callback')
        call MPI_Type_get_attr(copy, keyval, val, flag, ierr)
        call check(flag .and. val == 4242, 'the attribute on the rebuilt type')
        call MPIX_Type_unregister_marshaled_keyval(keyval, ierr)
        call check(ierr == MPI_SUCCESS, 'unregister_marshaled_keyval')
        calls = 0
        call MPIX_Type_marshal('external', t, bytes, n, w, ierr)
        call check(ierr == MPI_SUCCESS .and. calls == 0, 'no callback once unregistered')
        call MPI_Type_free(copy, ierr)
        call MPI_Type_free(t, ierr)
        call MPI_Type_free_keyval(keyval, ierr)
    end subroutine

    integer function record_type() result(t)
        integer :: s, ierr
        type(record) :: rr(2)
        integer(MPI_ADDRESS_KIND) :: base, d(3), next
        call MPI_Get_address(rr(1), base, ierr)
        call MPI_Get_address(rr(1)%values, d(1), ierr)
        call MPI_Get_address(rr(1)%id, d(2), ierr)
        call MPI_Get_address(rr(1)%flags, d(3), ierr)
        call MPI_Get_address(rr(2), next, ierr)
        d = d - base
        call MPI_Type_create_struct(3, [3, 1, 4], d, [MPI_DOUBLE_PRECISION, MPI_INTEGER, MPI_INTEGER], s, ierr)
        call MPI_Type_create_resized(s, 0_MPI_ADDRESS_KIND, next - base, t, ierr)
        call MPI_Type_free(s, ierr)
        call MPI_Type_set_name(t, 'record', ierr)
        call MPI_Type_commit(t, ierr)
    end function

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
        integer :: ierr
        if (.not. ok) then
            print '(a,i0,a,a)', 'FAILED on rank ', rank, ': ', what
            call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
        end if
        checks = checks + 1
    end subroutine
end program records_mpi
