/* wavepacket_volume's command line, how it deals the tiles, and its synthetic volume. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wavepacket_volume.h"

static const char *USAGE =
    "usage: wavepacket_volume [--volume N1xN2[xN3]] [--tile T1xT2[xT3]] [--directions N]\n"
    "  [--levels N] [--cutoff C] [--round-robin] [--backend auto|cpu|cuda] [-o FILE | --no-output]\n"
    "  [--check] [--bad-rank R] [--quiet]";

/* "64x64x32" or "64x64": the axes, 1 for an unused third; returns their count, or 0. */
static int shape(const char *v, size_t out[3]) {
    int n = 0;
    out[0] = out[1] = out[2] = 1;
    while (n < 3) {
        char *end;
        unsigned long long x = strtoull(v, &end, 10);
        if (end == v || x == 0) return 0;
        out[n++] = (size_t)x;
        if (*end == 0) break;
        if (*end != 'x') return 0;
        v = end + 1;
    }
    return n >= 2 && n <= 3 && !strchr(v, 'x') ? n : 0;
}

static int count(const char *v, size_t *out) {
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *end || v[0] == '-') return -1;
    *out = (size_t)x;
    return 0;
}

/* One option with a value; 1 if `flag` is not one of them, -1 if its value is bad. */
static int valued(config *c, const char *flag, const char *v, int *tile_dim) {
    static const char *const be[] = {"auto", "cpu", "cuda"}; /* SG_BACKEND_AUTO, _CPU, _CUDA */
    size_t n = 0;
    if (!strcmp(flag, "--volume")) return (c->dim = shape(v, c->volume)) ? 0 : -1;
    if (!strcmp(flag, "--tile")) return (*tile_dim = shape(v, c->tile)) ? 0 : -1;
    if (!strcmp(flag, "-o")) c->out = v;
    else if (!strcmp(flag, "--directions")) return count(v, &c->options.directions);
    else if (!strcmp(flag, "--levels")) return count(v, &c->options.levels);
    else if (!strcmp(flag, "--cutoff")) {
        char *end;
        c->options.cutoff = strtod(v, &end);
        return *v && !*end ? 0 : -1;
    }
    else if (!strcmp(flag, "--bad-rank")) {
        if (count(v, &n)) return -1;
        c->bad_rank = (int)n;
    } else if (!strcmp(flag, "--backend")) {
        for (int i = 0; i < 3; i++)
            if (!strcmp(v, be[i])) c->backend = i;
        return strcmp(v, be[c->backend]) ? -1 : 0;
    } else
        return 1;
    return 0;
}

int parse_args(int argc, char **argv, config *c, failure *f) {
    memset(c, 0, sizeof *c);
    c->dim = 3;
    c->volume[0] = c->volume[1] = 64;
    c->volume[2] = c->tile[0] = c->tile[1] = c->tile[2] = 32;
    c->bad_rank = -1;
    c->out = "wavepacket_volume.wp";
    c->options = sg_wavepacket_layout_options_default();
    int tile_dim = 3;
    for (int i = 1; i < argc && !f->text[0]; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--round-robin")) c->round_robin = 1;
        else if (!strcmp(a, "--check")) c->check = 1;
        else if (!strcmp(a, "--quiet")) c->quiet = 1;
        else if (!strcmp(a, "--no-output")) c->out = NULL;
        else if (i + 1 >= argc) fail(f, "%s: an unknown option, or no value\n%s", a, USAGE);
        else {
            int rc = valued(c, a, argv[i + 1], &tile_dim);
            if (rc == 1) fail(f, "unknown option %s\n%s", a, USAGE);
            else if (rc < 0) fail(f, "bad value %s for %s\n%s", argv[i + 1], a, USAGE);
            i++;
        }
    }
    if (!f->text[0] && tile_dim != c->dim)
        fail(f, "the volume has %d axes and the tile %d\n%s", c->dim, tile_dim, USAGE);
    if (!f->text[0] && c->check && !c->out)
        fail(f, "--check reads the file back: it needs -o FILE, not --no-output");
    return f->text[0] ? -1 : 0;
}

int tile_is_mine(const config *c, size_t t, size_t n, int r, int size) {
    size_t s = (size_t)size, q = (size_t)r;
    if (c->round_robin) return t % s == q;
    size_t base = n / s, extra = n % s;
    size_t first = q * base + (q < extra ? q : extra);
    return t >= first && t < first + base + (q < extra);
}

/* Two dipping Ricker reflections and a weaker curved one, at sample (i1, i2, i3). */
static float sample(size_t i1, size_t i2, size_t i3, const size_t n[3]) {
    const double PI = 3.14159265358979323846;
    double x = (double)i2 - 0.5 * (double)n[1], y = (double)i3 - 0.5 * (double)n[2];
    double d[3] = {(double)i1 - 0.25 * (double)n[0] - 0.3 * x - 0.1 * y,
                   (double)i1 - 0.6 * (double)n[0] + 0.2 * x - 0.25 * y,
                   (double)i1 - 0.4 * (double)n[0] - 0.004 * (x * x + y * y)};
    double amp[3] = {1.0, -0.7, 0.5}, v = 0.0;
    for (int k = 0; k < 3; k++) {
        double a = PI * 0.12 * d[k];
        v += amp[k] * (1.0 - 2.0 * a * a) * exp(-a * a);
    }
    return (float)v;
}

void synthetic_tile(const run *r, size_t t, float *tile) {
    const size_t *n = r->cfg.volume, *s = r->cfg.tile;
    size_t o[3] = {0, 0, 0}, n_tile, m_tile;
    sg_wavepacket_volume_tile_info(r->volume, t, o, &n_tile, &m_tile);
    for (size_t i3 = 0; i3 < s[2]; i3++)
        for (size_t i2 = 0; i2 < s[1]; i2++)
            for (size_t i1 = 0; i1 < s[0]; i1++) {
                size_t g1 = o[0] + i1, g2 = o[1] + i2, g3 = o[2] + i3;
                int inside = g1 < n[0] && g2 < n[1] && g3 < n[2];
                tile[(i3 * s[1] + i2) * s[0] + i1] = inside ? sample(g1, g2, g3, n) : 0.0f;
            }
}

void synthetic_volume(const run *r, float *data) {
    const size_t *n = r->cfg.volume;
    for (size_t i3 = 0; i3 < n[2]; i3++)
        for (size_t i2 = 0; i2 < n[1]; i2++)
            for (size_t i1 = 0; i1 < n[0]; i1++)
                data[(i3 * n[1] + i2) * n[0] + i1] = sample(i1, i2, i3, n);
}
