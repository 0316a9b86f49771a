/* xcorr_network's command line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xcorr_network.h"

static const char *USAGE =
    "usage: xcorr_network (--list FILE | --synthetic N) [--samples N] [--fs HZ]\n"
    "  [--freqmin HZ] [--freqmax HZ] [--cc-len S] [--step S] [--maxlag S]\n"
    "  [--cc-method xcorr|deconv|coherency] [--stack linear|pws|robust] [--substack-len S]\n"
    "  [--autocorrelation] [--groups G] [--exchange] [--backend auto|cpu|cuda] [-o FILE]\n"
    "  [--quiet]";

static int pick(const char *v, const char *const *names, int n, int *out) {
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return -1;
}

static int number(const char *v, double *out) {
    char *end;
    *out = strtod(v, &end);
    return *v && !*end ? 0 : -1;
}

/* One option with a value; 1 if `flag` is not one of them, -1 if its value is bad. */
static int valued(config *c, const char *flag, const char *v) {
    static const char *const cc[] = {"xcorr", "deconv", "coherency"};
    static const char *const st[] = {"linear", "pws", "robust"};
    /* in the order of SG_BACKEND_AUTO, _CPU, _CUDA (0, 1, 2) */
    static const char *const be[] = {"auto", "cpu", "cuda"};
    sg_xcorr_options *o = &c->options;
    double x = 0.0;
    int is_count = !strcmp(flag, "--synthetic") || !strcmp(flag, "--samples") || !strcmp(flag, "--groups");
    if (is_count) {
        if (number(v, &x) || x < 1 || x != (double)(size_t)x) return -1;
        size_t n = (size_t)x;
        if (!strcmp(flag, "--synthetic")) c->synthetic = n;
        else if (!strcmp(flag, "--samples")) c->n_samples = n;
        else c->groups = n;
        return 0;
    }
    if (!strcmp(flag, "--list")) c->list = v;
    else if (!strcmp(flag, "-o")) c->out = v;
    else if (!strcmp(flag, "--cc-method")) return pick(v, cc, 3, &o->cc_method);
    else if (!strcmp(flag, "--stack")) return pick(v, st, 3, &o->stack_method);
    else if (!strcmp(flag, "--backend")) return pick(v, be, 3, &c->backend);
    else {
        double *dst = !strcmp(flag, "--fs") ? &o->sampling_rate
                      : !strcmp(flag, "--freqmin") ? &o->freqmin
                      : !strcmp(flag, "--freqmax") ? &o->freqmax
                      : !strcmp(flag, "--cc-len") ? &o->cc_len
                      : !strcmp(flag, "--step") ? &o->step
                      : !strcmp(flag, "--maxlag") ? &o->maxlag
                      : !strcmp(flag, "--substack-len") ? &c->substack_len : NULL;
        if (!dst) return 1;
        return number(v, dst);
    }
    return 0;
}

int parse_args(int argc, char **argv, config *c, failure *f) {
    memset(c, 0, sizeof *c);
    c->n_samples = 86400;
    c->out = "xcorr_network.xc";
    c->options = sg_xcorr_options_default();
    c->options.sampling_rate = 1.0;
    c->options.freqmin = 0.05;
    c->options.freqmax = 0.4;
    for (int i = 1; i < argc && !f->text[0]; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--exchange")) c->exchange = 1;
        else if (!strcmp(a, "--quiet")) c->quiet = 1;
        else if (!strcmp(a, "--autocorrelation")) c->options.autocorrelation = 1;
        else if (i + 1 >= argc) fail(f, "%s: an unknown option, or no value\n%s", a, USAGE);
        else {
            int rc = valued(c, a, argv[i + 1]);
            if (rc == 1) fail(f, "unknown option %s\n%s", a, USAGE);
            else if (rc < 0) fail(f, "bad value %s for %s\n%s", argv[i + 1], a, USAGE);
            i++;
        }
    }
    if (!f->text[0] && !c->list == !c->synthetic)
        fail(f, "give one of --list FILE and --synthetic N\n%s", USAGE);
    return f->text[0] ? -1 : 0;
}
