! Wall-clock timers in the style of NPB (timer_clear/start/stop/read).

double precision function wtime()
  implicit none
  integer(kind=8) :: cnt, rate
  call system_clock(cnt, rate)
  wtime = dble(cnt) / dble(rate)
end function wtime

subroutine timer_clear(n)
  implicit none
  integer, intent(in) :: n
  double precision :: start(64), elapsed(64)
  common /npbtimers/ start, elapsed
  elapsed(n) = 0.0d0
end subroutine timer_clear

subroutine timer_start(n)
  implicit none
  integer, intent(in) :: n
  double precision :: start(64), elapsed(64)
  common /npbtimers/ start, elapsed
  double precision, external :: wtime
  start(n) = wtime()
end subroutine timer_start

subroutine timer_stop(n)
  implicit none
  integer, intent(in) :: n
  double precision :: start(64), elapsed(64)
  common /npbtimers/ start, elapsed
  double precision, external :: wtime
  double precision :: now
  now = wtime()
  elapsed(n) = elapsed(n) + (now - start(n))
end subroutine timer_stop

double precision function timer_read(n)
  implicit none
  integer, intent(in) :: n
  double precision :: start(64), elapsed(64)
  common /npbtimers/ start, elapsed
  timer_read = elapsed(n)
end function timer_read
