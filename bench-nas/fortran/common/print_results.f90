! NPB-style result report.

subroutine print_results(name, class, n1, n2, n3, niter, t, mops, optype, verified)
  implicit none
  character(len=*), intent(in) :: name, optype
  character, intent(in) :: class
  integer, intent(in) :: n1, n2, n3, niter
  double precision, intent(in) :: t, mops
  logical, intent(in) :: verified
  integer(kind=8) :: nn

  write (*, '(//,1x,a,a)') name, ' Benchmark Completed.'
  write (*, '(a,12x,a)') ' Class           =             ', class
  if (n3 == 0) then
    nn = n1
    if (n2 /= 0) nn = nn * n2
    write (*, '(a,i12)') ' Size            =             ', nn
  else
    write (*, '(a,i4,a,i4,a,i4)') ' Size            =           ', n1, 'x', n2, 'x', n3
  end if
  write (*, '(a,i12)') ' Iterations      =             ', niter
  write (*, '(a,f12.2)') ' Time in seconds =             ', t
  write (*, '(a,f15.2)') ' Mop/s total     =          ', mops
  write (*, '(a,a24)') ' Operation type  = ', optype
  if (verified) then
    write (*, '(a)') ' Verification    =               SUCCESSFUL'
  else
    write (*, '(a)') ' Verification    =             UNSUCCESSFUL'
  end if
  write (*, '(a)') ' Version         =                bench-nas'
  write (*, '(a)') ' Language        =                  Fortran'
  write (*, '(a)') ''
end subroutine print_results
