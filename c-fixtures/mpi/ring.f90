! Fortran MPI fixture (mpif.h): a token goes once round the ring of N >= 2 ranks; each rank
! adds its rank, so rank 0 prints 1 + N(N-1)/2. Every rank sends once to (r+1)%N and receives
! once from (r-1)%N, from the main program.
program ring
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nprocs, token, status(MPI_STATUS_SIZE)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  token = 0
  if (rank == 0) then
    token = 1
    call MPI_Send(token, 1, MPI_INTEGER, mod(rank+1, nprocs), 7, MPI_COMM_WORLD, ierr)
    call MPI_Recv(token, 1, MPI_INTEGER, nprocs-1, 7, MPI_COMM_WORLD, status, ierr)
    print *, 'token', token
  else
    call MPI_Recv(token, 1, MPI_INTEGER, rank-1, 7, MPI_COMM_WORLD, status, ierr)
    token = token + rank
    call MPI_Send(token, 1, MPI_INTEGER, mod(rank+1, nprocs), 7, MPI_COMM_WORLD, ierr)
  end if
  call MPI_Finalize(ierr)
end program
