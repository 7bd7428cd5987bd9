program shapes
  use kinds, only: dp
  use vectors, only: scale, norm
  use statistics, only: correlation, mean
  implicit none
  real(dp) :: a(100), b(100)
  integer :: i, round
  do i = 1, 100
    a(i) = real(mod(i * 37, 101), dp)
    b(i) = real(mod(i * 53, 97), dp) + a(i) / 2
  end do
  do round = 1, 4
    call scale(b, 0.5_dp)
    print '(A,I0,A,F8.5,A,F10.4)', 'round ', round, ': r = ', correlation(a, b), ' |b| = ', norm(b)
  end do
  print '(A,F8.3)', 'mean a = ', mean(a)
end program shapes
