! emlog: the quasi-solution region of a small linearised EM-logging problem, from Fortran.
!
! Twelve measurements of four conductivities through a sensitivity matrix
! a(i, j) = 1/(1 + |i - 3j|) (a probe reading mostly the zone near it), noise-free data of
! the true model (0.2, 0.5, 0.1, 0.3) S/m with relative errors of 1 %; the first three
! conductivities are searched on an 11^3 grid centred on the truth, the fourth is fixed.
! Checks known answers and stops with a non-zero exit status if one fails:
!   1. sigma* is the truth and F_min = 0;
!   2. the grid's best model is the truth;
!   3. the fast and direct modes count the same models, and each marginal sums to it;
!   4. the F^2 <= F^2_min + Delta region (Delta = 3.53/n, 68 % for three parameters) is
!      inside the F <= 1 region: fewer models, none outside its extent.
!
! Build: make examples
!   (or: gfortran -c include/seisgpu.f90; gfortran emlog.f90 -L target/release -lseisgpu)
program emlog
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use seisgpu
  implicit none

  integer, parameter :: n = 12, m = 4, p = 3, nv = 11
  integer :: failures = 0
  type(c_ptr) :: ctx = c_null_ptr, plan = c_null_ptr, res = c_null_ptr
  real(c_double) :: a(n, m), f(n), delta(n), truth(m)
  real(c_double) :: sigma_star(p), f_min, lower(p), upper(p), sv(p), vectors(p, p)
  real(c_double) :: best_model(p), best_f, vmin(p), vmax(p), vmin1(p), vmax1(p), lo(p), hi(p), none(1)
  integer(c_int32_t) :: st, empty, more, kinds(p), searched(p), no_pairs(1)
  integer(c_size_t) :: counts(p), n_models
  integer(c_int64_t) :: total, count, best, marg(nv), found(3)
  type(sg_emlog_options) :: o
  integer :: i, j, k, mode

  truth = [0.2_c_double, 0.5_c_double, 0.1_c_double, 0.3_c_double]
  do j = 1, m
    do i = 1, n
      a(i, j) = 1.0_c_double / (1.0_c_double + abs(real(i - 3 * j, c_double)))
    end do
  end do
  f = matmul(a, truth)
  delta = 0.01_c_double
  searched = [0, 1, 2]

  st = sg_context_create(SG_BACKEND_AUTO, 0_c_int32_t, ctx)
  call require(st, "sg_context_create")
  ! Column-major: element (i, j) at i*1 + j*n.
  st = sg_emlog_plan_create(ctx, int(n, c_size_t), int(m, c_size_t), a, 1_c_size_t, int(n, c_size_t), &
                            truth, f, f, delta, int(p, c_size_t), searched, plan)
  call require(st, "sg_emlog_plan_create")
  st = sg_emlog_analytic(plan, SG_EMLOG_FIT_WITHIN_ERRORS, 1.0_c_double, sigma_star, f_min, empty, &
                         lower, upper, sv, vectors)
  call require(st, "sg_emlog_analytic")
  print '(a, es9.2, a, 3f9.4)', "F_min", f_min, ", sigma*", sigma_star
  print '(a, 3f9.4, a, 3f9.4)', "region from", lower, " to", upper
  call check(empty == 0 .and. f_min < 1e-9_c_double .and. all(abs(sigma_star - truth(1:p)) < 1e-9_c_double), &
             "sigma* is the truth, F_min = 0")

  kinds = SG_EMLOG_AXIS_LINEAR
  counts = nv
  lo = truth(1:p) - 1.5_c_double * (upper - sigma_star)
  hi = truth(1:p) + 1.5_c_double * (upper - sigma_star)
  do mode = 1, 3
    o = sg_emlog_options_default()
    if (mode == 2) o%mode = SG_EMLOG_DIRECT
    if (mode == 3) then
      o%criterion = SG_EMLOG_DELTA_CHI_SQUARE
      o%level = 3.53_c_double / n
    end if
    st = sg_emlog_search(plan, kinds, counts, lo, hi, none, 0_c_size_t, 0_c_size_t, no_pairs, o, res)
    call require(st, "sg_emlog_search")
    st = sg_emlog_result_summary(res, total, count, best, best_model, best_f, vmin, vmax, n_models, more)
    call require(st, "sg_emlog_result_summary")
    st = sg_emlog_result_marginal(res, 2_c_size_t, marg, int(nv, c_size_t))
    call require(st, "sg_emlog_result_marginal")
    found(mode) = count
    print '(a, i2, a, i6, a, i6, a)', "search ", mode, ":", count, " of", total, " models equivalent"
    call check(sum(marg) == count, "the marginal sums to the count")
    if (mode == 1) then
      call check(all(abs(best_model - truth(1:p)) < 1e-12_c_double) .and. best_f < 1e-6_c_double, &
                 "the grid's best model is the truth")
      vmin1 = vmin
      vmax1 = vmax
    end if
    if (mode == 3) call check(all(vmin >= vmin1) .and. all(vmax <= vmax1), "the 68 % region lies inside F <= 1")
    call sg_emlog_result_destroy(res)
  end do
  call check(found(1) == found(2) .and. found(1) > 0, "fast and direct modes count the same models")
  call check(found(3) < found(1) .and. found(3) > 0, "the 68 % region has fewer models")

  call sg_emlog_plan_destroy(plan)
  call sg_context_destroy(ctx)
  if (failures > 0) then
    write (error_unit, '(a, i0, a)') "emlog: ", failures, " check(s) FAILED"
    stop 1
  end if
  print '(a)', "emlog: all checks passed"

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      print '(a, a)', "  [ok] ", what
    else
      print '(a, a)', "  [FAIL] ", what
      failures = failures + 1
    end if
  end subroutine check

  subroutine require(status, what)
    integer(c_int32_t), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= SG_OK) then
      write (error_unit, '(a)') sg_error_summary(status, what)
      stop 1
    end if
  end subroutine require

end program emlog
