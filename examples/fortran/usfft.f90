! usfft: non-uniform FFTs of both types in 3D from Fortran, checked against direct sums.
!
! Type 1 ("u2e"): f(k) = sum_j c(j) exp(i*sign*k.x_j); type 2 ("e2u"): c(j) = sum_k f(k)
! exp(i*sign*k.x_j), over centred modes k = -N/2 .. (N-1)/2 and points x_j in [-pi, pi)^3,
! in double precision through the module in include/seisgpu.f90. Creates an SG_BACKEND_AUTO
! context (the GPU when usable) and stops with a non-zero exit status when a relative l2
! error exceeds the requested tolerance, or when a tolerance below what double precision can
! reach is not refused with SG_ERR_INVALID_ARGUMENT.
!
! Build: make examples
program usfft_example
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use seisgpu
  implicit none

  integer, parameter :: dp = c_double
  integer, parameter :: n1 = 10, n2 = 8, n3 = 6, m = 700
  real(dp), parameter :: pi = 3.14159265358979323846_dp
  real(dp), parameter :: tol = 1.0e-10_dp
  integer(c_int32_t), parameter :: sign = 1

  type(c_ptr) :: ctx = c_null_ptr
  integer(c_int32_t) :: st, backend
  integer(c_int64_t) :: rng_state = 7777_c_int64_t
  real(dp) :: x(m), y(m), z(m)
  complex(dp), target :: c(m), c_out(m), f(n1, n2, n3), f_out(n1, n2, n3)
  real(dp) :: err
  integer :: failures = 0, j

  st = sg_context_create(SG_BACKEND_AUTO, 0_c_int32_t, ctx)
  call require(st, 'sg_context_create')
  st = sg_context_backend(ctx, backend)
  call require(st, 'sg_context_backend')
  if (backend == SG_BACKEND_CUDA) then
    write(*, '(a)') 'USFFT Fortran example on the GPU'
  else
    write(*, '(a)') 'USFFT Fortran example on the CPU'
  end if

  do j = 1, m
    x(j) = (2.0_dp * uniform() - 1.0_dp) * pi
    y(j) = (2.0_dp * uniform() - 1.0_dp) * pi
    z(j) = (2.0_dp * uniform() - 1.0_dp) * pi
    c(j) = cmplx(2.0_dp * uniform() - 1.0_dp, 2.0_dp * uniform() - 1.0_dp, dp)
  end do
  f = cmplx(0.0_dp, 0.0_dp, dp)
  call fill_modes(f)

  ! Type 1: strengths c at the points -> modes f_out.
  call transform(SG_USFFT_TYPE1, c, f_out)
  err = type1_error(f_out)
  write(*, '(a, es10.3, a, es8.1, a)') 'type 1, 10x8x6 modes, 700 points: rel l2 error ', err, &
    ' (tolerance ', tol, ')'
  if (.not. (err <= tol)) failures = failures + 1

  ! Type 2: modes f -> values c_out at the points.
  call transform(SG_USFFT_TYPE2, c_out, f)
  err = type2_error(c_out)
  write(*, '(a, es10.3, a, es8.1, a)') 'type 2, 10x8x6 modes, 700 points: rel l2 error ', err, &
    ' (tolerance ', tol, ')'
  if (.not. (err <= tol)) failures = failures + 1

  call tolerance_is_refused()

  call sg_context_destroy(ctx)
  if (failures > 0) then
    write(error_unit, '(i0, a)') failures, ' check(s) failed'
    stop 1
  end if
  write(*, '(a)') 'all checks passed'

contains

  subroutine transform(kind, cc, ff)
    integer(c_int32_t), intent(in) :: kind
    complex(dp), target, intent(inout) :: cc(m), ff(n1, n2, n3)
    type(c_ptr) :: plan
    integer(c_size_t) :: modes(3)
    plan = c_null_ptr
    modes = [int(n1, c_size_t), int(n2, c_size_t), int(n3, c_size_t)]
    st = sg_usfft_plan_create(ctx, kind, 3_c_int32_t, modes, sign, tol, SG_USFFT_F64, &
      1_c_size_t, sg_usfft_options_default(), plan)
    call require(st, 'sg_usfft_plan_create')
    st = sg_usfft_set_points_f64(plan, int(m, c_size_t), x, y, z)
    call require(st, 'sg_usfft_set_points_f64')
    st = sg_usfft_execute_f64(plan, c_loc(cc), c_loc(ff))
    call require(st, 'sg_usfft_execute_f64')
    call sg_usfft_plan_destroy(plan)
  end subroutine transform

  subroutine fill_modes(ff)
    complex(dp), intent(out) :: ff(n1, n2, n3)
    integer :: a, b, d
    do d = 1, n3
      do b = 1, n2
        do a = 1, n1
          ff(a, b, d) = cmplx(2.0_dp * uniform() - 1.0_dp, 2.0_dp * uniform() - 1.0_dp, dp)
        end do
      end do
    end do
  end subroutine fill_modes

  ! exp(i*sign*k.x_j) for the mode at Fortran indices (a, b, d).
  complex(dp) function wave(a, b, d, jj)
    integer, intent(in) :: a, b, d, jj
    real(dp) :: phase
    phase = real(a - 1 - n1 / 2, dp) * x(jj) + real(b - 1 - n2 / 2, dp) * y(jj) &
      + real(d - 1 - n3 / 2, dp) * z(jj)
    wave = exp(cmplx(0.0_dp, real(sign, dp) * phase, dp))
  end function wave

  real(dp) function type1_error(got)
    complex(dp), intent(in) :: got(n1, n2, n3)
    complex(dp) :: s
    real(dp) :: num, den
    integer :: a, b, d, jj
    num = 0.0_dp
    den = 0.0_dp
    do d = 1, n3
      do b = 1, n2
        do a = 1, n1
          s = cmplx(0.0_dp, 0.0_dp, dp)
          do jj = 1, m
            s = s + c(jj) * wave(a, b, d, jj)
          end do
          num = num + abs(got(a, b, d) - s)**2
          den = den + abs(s)**2
        end do
      end do
    end do
    type1_error = sqrt(num / den)
  end function type1_error

  real(dp) function type2_error(got)
    complex(dp), intent(in) :: got(m)
    complex(dp) :: s
    real(dp) :: num, den
    integer :: a, b, d, jj
    num = 0.0_dp
    den = 0.0_dp
    do jj = 1, m
      s = cmplx(0.0_dp, 0.0_dp, dp)
      do d = 1, n3
        do b = 1, n2
          do a = 1, n1
            s = s + f(a, b, d) * wave(a, b, d, jj)
          end do
        end do
      end do
      num = num + abs(got(jj) - s)**2
      den = den + abs(s)**2
    end do
    type2_error = sqrt(num / den)
  end function type2_error

  ! A tolerance of 1e-16 in double precision is below N*eps_mach: refused with a message.
  subroutine tolerance_is_refused()
    type(c_ptr) :: plan
    integer(c_size_t) :: modes(3)
    plan = c_null_ptr
    modes = [int(n1, c_size_t), int(n2, c_size_t), int(n3, c_size_t)]
    st = sg_usfft_plan_create(ctx, SG_USFFT_TYPE1, 3_c_int32_t, modes, sign, 1.0e-16_dp, &
      SG_USFFT_F64, 1_c_size_t, sg_usfft_options_default(), plan)
    if (st /= SG_ERR_INVALID_ARGUMENT .or. c_associated(plan)) then
      write(error_unit, '(a, i0)') 'tolerance 1e-16 was not refused: status ', st
      failures = failures + 1
    else
      write(*, '(a, a)') 'tolerance 1e-16 refused as expected: ', sg_last_error()
    end if
  end subroutine tolerance_is_refused

  real(dp) function uniform()
    ! xorshift64, top 53 bits
    rng_state = ieor(rng_state, ishft(rng_state, 13))
    rng_state = ieor(rng_state, ishft(rng_state, -7))
    rng_state = ieor(rng_state, ishft(rng_state, 17))
    uniform = real(ishft(rng_state, -11), dp) / 9007199254740992.0_dp
  end function uniform

  subroutine require(status, what)
    integer(c_int32_t), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= SG_OK) then
      write(error_unit, '(a, a, a)') what, ' failed: ', sg_last_error()
      stop 1
    end if
  end subroutine require

end program usfft_example
