! progress: progress reports and cancellation of a long seisgpu call, from Fortran.
!
! A bind(C) function (on_progress, in the module below) is passed to
! sg_context_set_progress with c_funloc, and a Fortran derived type as its `user` pointer
! with c_loc. An F-XY decon of a double-precision volume (filtered on the CPU on every
! backend) prints its stages and fractions; reports come after the first chunk of work and
! then at most every 100 ms, so the volume is doubled until a call reports at least four
! times before its end (it lasts 300 ms or more). Checks, with a non-zero exit status if
! one fails:
!   1. the fractions only grow and the last one is exactly 1;
!   2. a second call, whose callback asks to stop at its second report (any fraction above
!      the first report's, which the first chunk fixes), returns SG_ERR_CANCELLED with a
!      message, stops there, and leaves the output array as it was;
!   3. the plan is still usable: a third call, with the callback removed, succeeds and
!      gives the first call's output bit for bit.
!
! Build: make examples
!   (or: gfortran -c include/seisgpu.f90; gfortran progress.f90 -L target/release -lseisgpu)
module progress_log
  use, intrinsic :: iso_c_binding
  implicit none

  ! What the callback saw, and the fraction from which it asks to stop (> 1: never).
  type :: log_t
    integer :: reports = 0, before_end = 0
    real(c_double) :: first = -1.0_c_double, last = -1.0_c_double
    logical :: monotone = .true.
    real(c_double) :: stop_from = 2.0_c_double
  end type log_t

contains

  ! The callback: called from the thread that made the call, between chunks of work.
  function on_progress(user, stage, fraction) bind(C) result(stop_now)
    type(c_ptr), value :: user, stage
    real(c_double), value :: fraction
    integer(c_int) :: stop_now
    type(log_t), pointer :: log
    character(kind=c_char), pointer :: chars(:)
    character(len=64) :: name
    integer :: i

    call c_f_pointer(user, log)
    call c_f_pointer(stage, chars, [len(name)])
    name = ''
    do i = 1, len(name)
      if (chars(i) == c_null_char) exit
      name(i:i) = chars(i)
    end do
    write(*, '(a, a, a, f6.1, a)') '    ', trim(name), ': ', 100.0_c_double * fraction, ' %'
    log%reports = log%reports + 1
    if (log%reports == 1) log%first = fraction
    if (fraction < log%last) log%monotone = .false.
    if (fraction < 1.0_c_double) log%before_end = log%before_end + 1
    log%last = fraction
    stop_now = merge(1_c_int, 0_c_int, fraction >= log%stop_from)
  end function on_progress

end module progress_log

program progress
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use seisgpu
  use progress_log
  implicit none

  integer, parameter :: dp = c_double
  integer, parameter :: n_samples = 400, n_inline = 48, max_crossline = 3072
  real(dp), parameter :: sentinel = -7.0_dp

  type(c_ptr) :: ctx = c_null_ptr, plan = c_null_ptr
  type(sg_fxdecon_options) :: options
  type(log_t), target :: log
  integer(c_int32_t) :: st
  integer(c_int64_t) :: rng_state = 20261123_c_int64_t
  integer :: passed = 0, failures = 0
  integer(c_size_t) :: inline_stride, crossline_stride
  real(dp), allocatable :: volume(:, :, :), first(:, :, :), out(:, :, :)
  integer :: n_crossline = 24
  real(dp) :: stop_from
  character(len=:), allocatable :: description

  st = sg_context_create(SG_BACKEND_AUTO, 0_c_int32_t, ctx)
  call require(st, 'sg_context_create(SG_BACKEND_AUTO)')
  description = sg_context_description(ctx, st)
  call require(st, 'sg_context_describe')
  write(*, '(a)') description
  options = sg_fxdecon_options_default()
  inline_stride = n_samples
  crossline_stride = int(n_samples, c_size_t) * n_inline
  st = sg_context_set_progress(ctx, c_funloc(on_progress), c_loc(log))
  call require(st, 'sg_context_set_progress')

  ! 1. A whole call, reported; the volume doubled until the call lasts long enough.
  do
    call make_volume()
    write(*, '(a, i0, a, i0, a, i0, a)') 'F-XY decon of ', n_inline, ' x ', n_crossline, &
      ' traces of ', n_samples, ' samples (f64):'
    log = log_t()
    st = sg_fxdecon_execute_3d_f64(plan, volume, first, inline_stride, crossline_stride)
    call require(st, 'sg_fxdecon_execute_3d_f64')
    if (log%before_end >= 4 .or. 2 * n_crossline > max_crossline) exit
    n_crossline = 2 * n_crossline
  end do
  call check(log%before_end >= 4 .and. log%monotone .and. log%last >= 1.0_dp, &
    'fractions only grow and end at exactly 1')

  ! 2. Stopped at the second report: the first one past the first chunk's fraction.
  stop_from = nearest(log%first, 1.0_dp)
  write(*, '(a, f5.1, a)') 'the same call, stopped from ', 100.0_dp * stop_from, ' %:'
  log = log_t(stop_from=stop_from)
  out = sentinel
  st = sg_fxdecon_execute_3d_f64(plan, volume, out, inline_stride, crossline_stride)
  write(*, '(a, a)') '  status: ', sg_error_summary(st, 'sg_fxdecon_execute_3d_f64')
  call check(st == SG_ERR_CANCELLED, 'the call returns SG_ERR_CANCELLED')
  call check(log%reports == 2 .and. log%last >= stop_from .and. log%last < 1.0_dp, &
    'it stopped at the report that asked')
  call check(maxval(abs(out - sentinel)) <= 0.0_dp, 'the output array is untouched')

  ! 3. The plan still works.
  st = sg_context_set_progress(ctx, c_null_funptr, c_null_ptr)
  call require(st, 'sg_context_set_progress(NULL)')
  st = sg_fxdecon_execute_3d_f64(plan, volume, out, inline_stride, crossline_stride)
  call require(st, 'sg_fxdecon_execute_3d_f64 after the cancel')
  call check(maxval(abs(out - first)) <= 0.0_dp, &
    'the next call gives the first call''s output bit for bit')

  call sg_fxdecon_plan_destroy(plan)
  call sg_context_destroy(ctx)
  ! The main program's allocatables are not freed at its end (valgrind: definitely lost).
  deallocate(description, volume, first, out)
  write(*, '(a, i0, a, i0, a)') 'checks: ', passed, ' passed, ', failures, ' failed'
  if (failures > 0) stop 1

contains

  ! Dipping events in noise, n_crossline lines, and a plan for them.
  subroutine make_volume()
    integer :: i, il, xl
    if (allocated(volume)) deallocate(volume, first, out)
    allocate(volume(n_samples, n_inline, n_crossline), &
      first(n_samples, n_inline, n_crossline), out(n_samples, n_inline, n_crossline))
    do xl = 1, n_crossline
      do il = 1, n_inline
        do i = 1, n_samples
          volume(i, il, xl) = sin(0.07_dp * (i - 2 * il - xl)) + 0.3_dp * (uniform() - 0.5_dp)
        end do
      end do
    end do
    call sg_fxdecon_plan_destroy(plan)
    st = sg_fxdecon_plan_create_3d(ctx, options, int(n_samples, c_size_t), &
      int(n_inline, c_size_t), int(n_crossline, c_size_t), plan)
    call require(st, 'sg_fxdecon_plan_create_3d')
  end subroutine make_volume

  subroutine require(status, what)
    integer(c_int32_t), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status == SG_OK) return
    write(error_unit, '(a, a)') 'error: ', sg_error_summary(status, what // ' failed')
    call sg_fxdecon_plan_destroy(plan)
    call sg_context_destroy(ctx)
    stop 1
  end subroutine require

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      write(*, '(a, a)') '  [ok] ', what
      passed = passed + 1
    else
      write(*, '(a, a)') '  [FAIL] ', what
      failures = failures + 1
    end if
  end subroutine check

  ! Park-Miller "minimal standard" generator (multiplier 48271), in (0, 1).
  function uniform() result(u)
    real(dp) :: u
    rng_state = mod(rng_state * 48271_c_int64_t, 2147483647_c_int64_t)
    u = real(rng_state, dp) / 2147483647.0_dp
  end function uniform

end program progress
