// Wave-packet windows on the device: the GPU half of src/wavepacket/windows.rs. Every stored
// window value ŵ_b(ξ) = cell · s_b · g_b(ξ) / √S(ξ) at box b's lattice points, computed in
// double precision as the host evaluator computes it and rounded to REAL; then the packet
// norms' sums of squares, one block per box.
//
// The tables (src/wavepacket/cuda/windows.rs builds them from the evaluator):
// - params: WP_PARAMS doubles, named below;
// - per lattice LAT_FIELDS doubles: its axes e1, e2, e3, its periods, its gate (the cone's
//   cosine, the rectangle's [lo, hi] along e1 in lattice units, slack included) and its cell
//   factor; `lat_first[l] … lat_first[l + 1]` index `lat_boxes`, the lattice's boxes;
// - per box BOX_REALS doubles (its rectangle's [lo, hi] per axis in lattice units, slack
//   included, ±∞ along unused axes; its scale s_b; its direction ν) and BOX_INTS long longs;
// - the frequency cells: `cell_first[c] … cell_first[c + 1]` index `cell_lattices`.

#define P_ANGULAR_STD 0
#define P_REACH 1
#define P_SIGMA0 2
#define P_ALPHA 3
#define P_TAPER_STD 4
#define P_CELL_WIDTH 5
#define P_CENTRE 6                       // MAX_LEVELS centre frequencies ρ_k
#define P_LN_CENTRE (P_CENTRE + MAX_LEVELS) // ln ρ_k
#define P_LEVEL_REACH (P_LN_CENTRE + MAX_LEVELS) // [min, max] |ξ| of level k's rectangles
#define MAX_LEVELS 13
#define WP_PARAMS (P_LEVEL_REACH + 2 * MAX_LEVELS)

#define LAT_FIELDS 16 // axes 0..8, periods 9..11, cone 12, lo 13, hi 14, cell factor 15
#define BOX_REALS 10  // bounds 0..5, scale 6, direction 7..9
#define BOX_INTS 10   // first value, lo1..lo3, n1..n3, lattice, level, direction
#define CELLS_K 32    // direction cells per cube-face edge
#define SHELLS 32     // shells of |x|

struct win_tables {
    const double *params;
    const double *lat;
    const int *lat_first;
    const int *lat_boxes;
    const double *box_real;
    const long long *box_int;
    const long long *cell_first;
    const unsigned *cell_lattices;
    int n_lattices;
    int dim;
    int levels;
};

__device__ __forceinline__ double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

__device__ __forceinline__ double norm3(const double *a) { return sqrt(dot3(a, a)); }

// The factor outside the cell [−½, ½]^3 (`Radial::taper`).
__device__ double win_taper(const double *params, const double *x)
{
    double d2 = 0.0;
    for (int a = 0; a < 3; ++a) {
        double d = fmax(fabs(x[a]) - 0.5, 0.0);
        d2 += d * d;
    }
    if (d2 == 0.0)
        return 1.0;
    double t = params[P_TAPER_STD];
    return exp(-0.5 * d2 / (t * t));
}

// θ² between unit vectors u and ν: θ = 2·asin(|u − ν|/2).
__device__ __forceinline__ double squared_angle(const double *u, const double *nu)
{
    double d0 = u[0] - nu[0], d1 = u[1] - nu[1], d2 = u[2] - nu[2];
    double h = 0.5 * sqrt(d0 * d0 + d1 * d1 + d2 * d2);
    double theta = 2.0 * asin(fmin(h, 1.0));
    return theta * theta;
}

// R_k(ρ)² of every level whose rectangles reach ρ > 0, 0 for the others.
__device__ void radial_squares(const win_tables &w, double rho, double *r)
{
    const double *p = w.params;
    double ln_rho = log(rho);
    for (int k = 0; k <= w.levels; ++k) {
        r[k] = 0.0;
        if (rho < p[P_LEVEL_REACH + 2 * k] || rho > p[P_LEVEL_REACH + 2 * k + 1])
            continue;
        if (k == 0) {
            double s0 = p[P_SIGMA0];
            r[0] = exp(-rho * rho / (s0 * s0));
        } else {
            double l = (ln_rho - p[P_LN_CENTRE + k]) * p[P_ALPHA];
            r[k] = exp(-l * l);
        }
    }
}

__device__ __forceinline__ bool inside(const double *bounds, const double *c)
{
    for (int a = 0; a < 3; ++a)
        if (!(c[a] >= bounds[2 * a] && c[a] <= bounds[2 * a + 1]))
            return false;
    return true;
}

// Σ over lattice l's boxes of ½·s_b²·g_b(x)², given |x| = rho, x/|x| = unit and the radial
// squares r (`WindowEvaluator::side`).
__device__ double side(const win_tables &w, int l, const double *x, double rho,
                       const double *unit, const double *r)
{
    const double *lat = w.lat + (long long)l * LAT_FIELDS;
    double along = dot3(lat, x);
    double c0 = along * lat[9];
    if (along < lat[12] * rho || c0 < lat[13] || c0 > lat[14])
        return 0.0;
    double c[3] = {c0, dot3(lat + 3, x) * lat[10], dot3(lat + 6, x) * lat[11]};
    double radial = 0.0;
    bool directional = false;
    for (int j = w.lat_first[l]; j < w.lat_first[l + 1]; ++j) {
        int b = w.lat_boxes[j];
        const double *br = w.box_real + (long long)b * BOX_REALS;
        if (inside(br, c)) {
            int level = (int)w.box_int[(long long)b * BOX_INTS + 8];
            radial += 0.5 * br[6] * br[6] * r[level];
            directional = level > 0;
        }
    }
    if (!directional || radial == 0.0)
        return radial;
    double s = w.params[P_ANGULAR_STD];
    return radial * exp(-squared_angle(unit, lat) / (s * s));
}

// The frequency cell of x (0 < |x| = rho): `FrequencyCells::of`.
__device__ long long cell_of(const win_tables &w, const double *x, double rho)
{
    int a = 0;
    for (int p = 1; p < 3; ++p)
        if (fabs(x[p]) >= fabs(x[a]))
            a = p;
    int face = 2 * a + (x[a] < 0.0 ? 1 : 0);
    double m = fabs(x[a]);
    double u = x[(a + 1) % 3] / m, v = x[(a + 2) % 3] / m;
    int cu = min((int)((u + 1.0) * 0.5 * CELLS_K), CELLS_K - 1);
    int cv = min((int)((v + 1.0) * 0.5 * CELLS_K), CELLS_K - 1);
    double sh = rho / w.params[P_CELL_WIDTH];
    int shell = sh >= (double)(SHELLS - 1) ? SHELLS - 1 : (int)sh;
    return (((long long)face * CELLS_K + cu) * CELLS_K + cv) * SHELLS + shell;
}

// Σ over the lattices of x's cell of `side`.
__device__ double cell_sum(const win_tables &w, const double *x, double rho, const double *unit,
                           const double *r)
{
    long long c = cell_of(w, x, rho);
    double s = 0.0;
    for (long long i = w.cell_first[c]; i < w.cell_first[c + 1]; ++i)
        s += side(w, (int)w.cell_lattices[i], x, rho, unit, r);
    return s;
}

// Σ_b ½·s_b²·(g_b(x)² + g_b(−x)²) without the taper (`untapered_sum`).
__device__ double untapered_sum(const win_tables &w, const double *x)
{
    double r[MAX_LEVELS];
    double neg[3] = {-x[0], -x[1], -x[2]};
    double rho = norm3(x);
    if (rho == 0.0) {
        // Only the low-pass box reaches ξ = 0.
        for (int k = 0; k < MAX_LEVELS; ++k)
            r[k] = 0.0;
        r[0] = 1.0;
        double zero[3] = {0.0, 0.0, 0.0}, s = 0.0;
        for (int l = 0; l < w.n_lattices; ++l)
            s += side(w, l, x, rho, zero, r) + side(w, l, neg, rho, zero, r);
        return s;
    }
    radial_squares(w, rho, r);
    double unit[3] = {x[0] / rho, x[1] / rho, x[2] / rho};
    double plus = cell_sum(w, x, rho, unit, r);
    double minus_unit[3] = {-unit[0], -unit[1], -unit[2]};
    return plus + cell_sum(w, neg, rho, minus_unit, r);
}

// S(ξ): the normaliser, over the periodic images of ξ that some box reaches.
__device__ double normaliser(const win_tables &w, const double *xi)
{
    double reach = w.params[P_REACH];
    long long lo[3], hi[3];
    for (int d = 0; d < 3; ++d) {
        lo[d] = d < w.dim ? (long long)ceil(-reach - xi[d]) : 0;
        hi[d] = d < w.dim ? (long long)floor(reach - xi[d]) : 0;
    }
    double s = 0.0;
    for (long long m3 = lo[2]; m3 <= hi[2]; ++m3)
        for (long long m2 = lo[1]; m2 <= hi[1]; ++m2)
            for (long long m1 = lo[0]; m1 <= hi[0]; ++m1) {
                double x[3] = {xi[0] + (double)m1, xi[1] + (double)m2, xi[2] + (double)m3};
                if (norm3(x) > reach + 1e-9)
                    continue;
                double t = win_taper(w.params, x);
                if (t != 0.0)
                    s += t * t * untapered_sum(w, x);
            }
    return s;
}

// g_b(ξ) at one of b's own lattice points (inside its rectangle by construction).
__device__ double raw_window(const win_tables &w, const double *br, int level, const double *xi)
{
    const double *p = w.params;
    double rho = norm3(xi);
    double profile;
    if (level == 0) {
        double s0 = p[P_SIGMA0];
        profile = exp(-rho * rho / (2.0 * s0 * s0));
    } else if (rho <= 0.0) {
        profile = 0.0;
    } else {
        double l = log(rho / p[P_CENTRE + level]) * p[P_ALPHA];
        profile = exp(-0.5 * l * l);
    }
    double g = profile * win_taper(p, xi);
    if (level > 0) {
        double cosine = rho > 0.0 ? dot3(br + 7, xi) / rho : 0.0;
        double theta = acos(fmin(fmax(cosine, -1.0), 1.0));
        double s = p[P_ANGULAR_STD];
        g *= exp(-theta * theta / (2.0 * s * s));
    }
    return g;
}

// windows[e] for every value of every box (the boxes' values one box after another, axis 1
// fastest, box b's from box_int's first value): box b = blockIdx.y, its values strided over
// the blocks along x.
extern "C" __global__ void wp_windows(const double *params, const double *lat,
                                      const int *lat_first, const int *lat_boxes,
                                      const double *box_real, const long long *box_int,
                                      const long long *cell_first, const unsigned *cell_lattices,
                                      int n_lattices, int dim, int levels, REAL *windows)
{
    win_tables w = {params,     lat,           lat_first,  lat_boxes, box_real, box_int,
                    cell_first, cell_lattices, n_lattices, dim,       levels};
    const long long *bi = box_int + (long long)blockIdx.y * BOX_INTS;
    const double *br = box_real + (long long)blockIdx.y * BOX_REALS;
    const double *l = lat + bi[7] * LAT_FIELDS;
    long long n = bi[4] * bi[5] * bi[6];
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) {
        long long i1 = k % bi[4], i2 = k / bi[4] % bi[5], i3 = k / (bi[4] * bi[5]);
        long long t[3] = {bi[1] + i1, bi[2] + i2, bi[3] + i3};
        double xi[3] = {0.0, 0.0, 0.0};
        for (int a = 0; a < 3; ++a) {
            double s = (double)t[a] / l[9 + a];
            for (int d = 0; d < 3; ++d)
                xi[d] += s * l[3 * a + d];
        }
        double g = raw_window(w, br, (int)bi[8], xi);
        double v = g == 0.0 ? 0.0 : l[15] * br[6] * g / sqrt(normaliser(w, xi));
        windows[bi[0] + k] = (REAL)v;
    }
}

// sums[b] = Σ windows² over box b's values, in double precision: one block per box,
// blockDim.x a power of two ≤ 1024.
extern "C" __global__ void wp_window_squares(const REAL *windows, const long long *box_int,
                                             double *sums)
{
    __shared__ double part[1024];
    int b = blockIdx.x;
    const long long *bi = box_int + (long long)b * BOX_INTS;
    long long end = bi[0] + bi[4] * bi[5] * bi[6];
    double s = 0.0;
    for (long long e = bi[0] + threadIdx.x; e < end; e += blockDim.x) {
        double v = (double)windows[e];
        s += v * v;
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h)
            part[threadIdx.x] += part[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        sums[b] = part[0];
}
