! The Fortran half of the mixed-language fixture: a program calling C, with the callbacks C
! calls back into. One profile must show both languages.
module callbacks
  use iso_c_binding, only: c_double, c_int
  implicit none
contains
  function integrand(x) result(y) bind(c, name='integrand')
    real(c_double), intent(in) :: x
    real(c_double) :: y
    y = x * x
  end function integrand

  subroutine fortran_log(value) bind(c, name='fortran_log')
    integer(c_int), intent(in) :: value
    print '(A,I0)', 'Fortran logs ', value
  end subroutine fortran_log
end module callbacks

program mixed
  use iso_c_binding, only: c_double, c_int
  use callbacks
  implicit none
  interface
    function integrate(a, b, n) result(s) bind(c, name='integrate')
      import :: c_double, c_int
      real(c_double), value :: a, b
      integer(c_int), value :: n
      real(c_double) :: s
    end function integrate
    subroutine report_c(n) bind(c, name='report_c')
      import :: c_int
      integer(c_int), value :: n
    end subroutine report_c
  end interface
  print '(A,F10.6)', 'integral of x^2 on [0,3] = ', integrate(0.0_c_double, 3.0_c_double, 1000_c_int)
  call report_c(1000_c_int)
end program mixed
