/*
 * hitcurve_sim: CPython extension over the hcsim engine, for the Celery worker.
 *
 *   simulate(keys, policies, sizes, *, object_sizes=None, costs=None, ops=None,
 *            unit="items", slab=False, policy_metadata=False, object_size=1024,
 *            sample_rate=1.0, salt=None, params=None, warmup=0.0, fill_on_miss=True,
 *            threads=0, sample_adjust=True, presampled=False) -> list of dicts (same fields
 *            as the CLI's results; presampled: the keys already are a spatial sample at
 *            sample_rate, so they are not sampled again, but sizes and pages still scale)
 *   exact_lru(keys, sizes) -> list of dicts {"size", "hit_ratio", "hits", "requests"}
 *   policies() -> list of (name, description)
 *
 * Arrays are any buffer (bytes, bytearray, array.array, memoryview) or a list: keys as
 * 64-bit integers (or bytes of packed native uint64), object sizes as integers, costs as
 * floats, ops as small integers (0 GET, 1 SET, 2 ADD, 3 DELETE). The GIL is released while
 * the simulations run.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "hcsim.h"

#include <stdlib.h>
#include <string.h>

/* A numeric input array, either borrowed from a buffer or converted into owned memory. */
typedef struct {
    Py_buffer view;
    int has_view;
    void *owned;
    const void *data;
    Py_ssize_t n;
} arr;

static void arr_release(arr *a)
{
    if (a->has_view)
        PyBuffer_Release(&a->view);
    free(a->owned);
    memset(a, 0, sizeof *a);
}

enum kind { K_U64, K_U32, K_F64, K_U8 };

static size_t elem_size(enum kind k)
{
    return k == K_U64 ? 8 : k == K_U32 ? 4 : k == K_F64 ? 8 : 1;
}

/* store element i of a buffer with format fmt into dst of kind k; -1 on bad value */
static int convert_elem(const char *fmt, const char *p, enum kind k, void *dst, Py_ssize_t i)
{
    char f = fmt ? fmt[0] : 'B';
    if (f == '@' || f == '=' || f == '<' || f == '>' || f == '!')
        f = fmt[1];
    double dv = 0;
    long long sv = 0;
    unsigned long long uv = 0;
    int is_float = 0, is_signed = 0;
    switch (f) {
    case 'b': sv = ((const signed char *)p)[i]; is_signed = 1; break;
    case 'B': uv = ((const unsigned char *)p)[i]; break;
    case 'h': sv = ((const short *)p)[i]; is_signed = 1; break;
    case 'H': uv = ((const unsigned short *)p)[i]; break;
    case 'i': sv = ((const int *)p)[i]; is_signed = 1; break;
    case 'I': uv = ((const unsigned int *)p)[i]; break;
    case 'l': sv = ((const long *)p)[i]; is_signed = 1; break;
    case 'L': uv = ((const unsigned long *)p)[i]; break;
    case 'q': sv = ((const long long *)p)[i]; is_signed = 1; break;
    case 'Q': uv = ((const unsigned long long *)p)[i]; break;
    case 'f': dv = ((const float *)p)[i]; is_float = 1; break;
    case 'd': dv = ((const double *)p)[i]; is_float = 1; break;
    default: return -2;
    }
    switch (k) {
    case K_U64:
        if (is_float)
            return -1;
        ((uint64_t *)dst)[i] = is_signed ? (uint64_t)sv : uv;   /* signed keys: same bits */
        return 0;
    case K_U32:
        if (is_float || (is_signed && sv < 0) || (is_signed ? (unsigned long long)sv : uv) > UINT32_MAX)
            return -1;
        ((uint32_t *)dst)[i] = (uint32_t)(is_signed ? (unsigned long long)sv : uv);
        return 0;
    case K_U8:
        if (is_float || (is_signed && sv < 0) || (is_signed ? (unsigned long long)sv : uv) > 3)
            return -1;
        ((uint8_t *)dst)[i] = (uint8_t)(is_signed ? sv : (long long)uv);
        return 0;
    case K_F64:
        ((double *)dst)[i] = is_float ? dv : is_signed ? (double)sv : (double)uv;
        return ((double *)dst)[i] >= 0 ? 0 : -1;
    }
    return -1;
}

static int native_fmt(const char *fmt, enum kind k)
{
    const char *f = fmt ? fmt : "B";
    if (f[0] == '@' || f[0] == '=')
        f++;
    if (f[1])
        return 0;
    switch (k) {
    case K_U64: return f[0] == 'Q' || f[0] == 'q' || ((f[0] == 'L' || f[0] == 'l') && sizeof(long) == 8);
    case K_U32: return f[0] == 'I' || (f[0] == 'L' && sizeof(long) == 4);
    case K_F64: return f[0] == 'd';
    case K_U8: return f[0] == 'B';
    }
    return 0;
}

static int get_array(PyObject *o, enum kind k, const char *name, arr *a)
{
    memset(a, 0, sizeof *a);
    if (PyObject_CheckBuffer(o)) {
        if (PyObject_GetBuffer(o, &a->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            return -1;
        a->has_view = 1;
        const char *fmt = a->view.format ? a->view.format : "B";
        /* raw bytes of packed native uint64 keys */
        if (k == K_U64 && a->view.itemsize == 1 && (fmt[0] == 'B' || fmt[0] == 'b' || fmt[0] == 'c')) {
            if (a->view.len % 8) {
                PyErr_Format(PyExc_ValueError, "%s: byte length %zd is not a multiple of 8", name, a->view.len);
                arr_release(a);
                return -1;
            }
            a->n = a->view.len / 8;
            if (((uintptr_t)a->view.buf % 8) == 0) {
                a->data = a->view.buf;
            } else {
                a->owned = malloc((size_t)a->view.len + 1);
                if (!a->owned) {
                    arr_release(a);
                    PyErr_NoMemory();
                    return -1;
                }
                memcpy(a->owned, a->view.buf, (size_t)a->view.len);
                a->data = a->owned;
            }
            return 0;
        }
        a->n = a->view.itemsize ? a->view.len / a->view.itemsize : 0;
        if (native_fmt(fmt, k)) {
            a->data = a->view.buf;
            return 0;
        }
        a->owned = malloc((size_t)a->n * elem_size(k) + 1);
        if (!a->owned) {
            arr_release(a);
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t i = 0; i < a->n; i++) {
            int rc = convert_elem(fmt, a->view.buf, k, a->owned, i);
            if (rc == -2) {
                PyErr_Format(PyExc_TypeError, "%s: unsupported buffer format '%s'", name, fmt);
                arr_release(a);
                return -1;
            }
            if (rc < 0) {
                PyErr_Format(PyExc_ValueError, "%s[%zd]: value out of range", name, i);
                arr_release(a);
                return -1;
            }
        }
        a->data = a->owned;
        return 0;
    }
    /* any sequence of numbers */
    PyObject *seq = PySequence_Fast(o, "");
    if (!seq) {
        PyErr_Format(PyExc_TypeError, "%s must be a buffer (bytes, array.array, memoryview) or a sequence", name);
        return -1;
    }
    a->n = PySequence_Fast_GET_SIZE(seq);
    a->owned = malloc((size_t)a->n * elem_size(k) + 1);
    if (!a->owned) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < a->n; i++) {
        PyObject *it = items[i];
        int bad = 0;
        if (k == K_F64) {
            double v = PyFloat_AsDouble(it);
            bad = (v == -1.0 && PyErr_Occurred()) || v < 0;
            ((double *)a->owned)[i] = v;
        } else if (k == K_U64) {
            unsigned long long v = PyLong_AsUnsignedLongLongMask(it);
            bad = v == (unsigned long long)-1 && PyErr_Occurred();
            ((uint64_t *)a->owned)[i] = v;
        } else {
            unsigned long long v = PyLong_AsUnsignedLongLong(it);
            bad = (v == (unsigned long long)-1 && PyErr_Occurred()) || v > (k == K_U32 ? UINT32_MAX : 3u);
            if (k == K_U32)
                ((uint32_t *)a->owned)[i] = (uint32_t)v;
            else
                ((uint8_t *)a->owned)[i] = (uint8_t)v;
        }
        if (bad) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s[%zd]: not a valid value", name, i);
            Py_DECREF(seq);
            arr_release(a);
            return -1;
        }
    }
    Py_DECREF(seq);
    a->data = a->owned;
    return 0;
}

/* policies: "lru,arc" or a sequence of names; returns a malloc'd array of borrowed UTF-8 */
static int get_names(PyObject *o, PyObject **keep, const char ***out, int *n)
{
    *keep = NULL;
    if (PyUnicode_Check(o)) {
        PyObject *sep = PyUnicode_FromString(",");
        *keep = PyUnicode_Split(o, sep, -1);
        Py_DECREF(sep);
    } else {
        *keep = PySequence_List(o);
    }
    if (!*keep) {
        PyErr_SetString(PyExc_TypeError, "policies must be a string or a sequence of strings");
        return -1;
    }
    Py_ssize_t m = PyList_GET_SIZE(*keep);
    *out = calloc((size_t)m + 1, sizeof **out);
    if (!*out) {
        PyErr_NoMemory();
        return -1;
    }
    *n = 0;
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *s = PyList_GET_ITEM(*keep, i);
        if (!PyUnicode_Check(s)) {
            PyErr_SetString(PyExc_TypeError, "policy names must be strings");
            return -1;
        }
        const char *u = PyUnicode_AsUTF8(s);
        if (!u)
            return -1;
        while (*u == ' ')
            u++;
        if (!*u)
            continue;
        if (!sim_policy_describe(u)) {
            PyErr_Format(PyExc_ValueError, "unknown policy '%s'", u);
            return -1;
        }
        (*out)[(*n)++] = u;
    }
    if (*n == 0) {
        PyErr_SetString(PyExc_ValueError, "no policies given");
        return -1;
    }
    return 0;
}

static int get_sizes(PyObject *o, uint64_t **out, int *n)
{
    PyObject *seq = PySequence_Fast(o, "sizes must be a sequence of positive integers");
    if (!seq)
        return -1;
    Py_ssize_t m = PySequence_Fast_GET_SIZE(seq);
    if (m == 0 || m > 100000) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "sizes: give 1 to 100000 cache sizes");
        return -1;
    }
    *out = malloc(sizeof **out * (size_t)m);
    if (!*out) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *it = PySequence_Fast_GET_ITEM(seq, i);
        unsigned long long v;
        if (PyFloat_Check(it)) {
            double d = PyFloat_AsDouble(it);
            v = d >= 1 && d < 1e18 ? (unsigned long long)(d + 0.5) : 0;
        } else {
            v = PyLong_AsUnsignedLongLong(it);
            if (PyErr_Occurred()) {
                PyErr_Clear();
                v = 0;
            }
        }
        if (v == 0) {
            Py_DECREF(seq);
            free(*out);
            *out = NULL;
            PyErr_Format(PyExc_ValueError, "sizes[%zd] must be a positive integer", i);
            return -1;
        }
        (*out)[i] = v;
    }
    *n = (int)m;
    Py_DECREF(seq);
    return 0;
}

/* params: "k=v,..." or a dict {"gclock.k": 2} or {"gclock": {"k": 2}} */
static char *params_string(PyObject *o)
{
    if (o == NULL || o == Py_None)
        return strdup("");
    if (PyUnicode_Check(o)) {
        const char *u = PyUnicode_AsUTF8(o);
        return u ? strdup(u) : NULL;
    }
    if (!PyDict_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "params must be a string or a dict");
        return NULL;
    }
    PyObject *parts = PyList_New(0);
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (parts && PyDict_Next(o, &pos, &k, &v)) {
        if (PyDict_Check(v)) {
            PyObject *k2, *v2;
            Py_ssize_t pos2 = 0;
            while (PyDict_Next(v, &pos2, &k2, &v2)) {
                PyObject *s = PyUnicode_FromFormat("%S.%S=%S", k, k2, v2);
                if (!s || PyList_Append(parts, s) < 0) {
                    Py_XDECREF(s);
                    Py_CLEAR(parts);
                    break;
                }
                Py_DECREF(s);
            }
        } else {
            PyObject *s = PyUnicode_FromFormat("%S=%S", k, v);
            if (!s || PyList_Append(parts, s) < 0) {
                Py_XDECREF(s);
                Py_CLEAR(parts);
                break;
            }
            Py_DECREF(s);
        }
    }
    if (!parts)
        return NULL;
    PyObject *sep = PyUnicode_FromString(",");
    PyObject *joined = PyUnicode_Join(sep, parts);
    Py_DECREF(sep);
    Py_DECREF(parts);
    if (!joined)
        return NULL;
    const char *u = PyUnicode_AsUTF8(joined);
    char *r = u ? strdup(u) : NULL;
    Py_DECREF(joined);
    return r;
}

static int set_item(PyObject *d, const char *k, PyObject *v)
{
    if (!v)
        return -1;
    int rc = PyDict_SetItemString(d, k, v);
    Py_DECREF(v);
    return rc;
}

static PyObject *py_simulate(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"keys", "policies", "sizes", "object_sizes", "costs", "ops", "unit",
                             "slab", "policy_metadata", "object_size", "sample_rate", "salt",
                             "params", "warmup", "fill_on_miss", "threads", "sample_adjust", "presampled",
                             NULL};
    PyObject *keys_o, *pol_o, *sizes_o, *osz_o = Py_None, *cost_o = Py_None, *ops_o = Py_None;
    PyObject *salt_o = Py_None, *params_o = Py_None;
    const char *unit = "items";
    int slab = 0, meta = 0, fill = 1, threads = 0, adjust = 1, presampled = 0;
    unsigned long object_size = 1024;
    double rate = 1.0, warmup = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO|$OOOsppkdOOdpipp", kwlist, &keys_o, &pol_o, &sizes_o,
                                     &osz_o, &cost_o, &ops_o, &unit, &slab, &meta, &object_size, &rate,
                                     &salt_o, &params_o, &warmup, &fill, &threads, &adjust, &presampled))
        return NULL;
    sim_config cfg;
    sim_config_default(&cfg);
    if (strcmp(unit, "items") && strcmp(unit, "bytes")) {
        PyErr_SetString(PyExc_ValueError, "unit must be 'items' or 'bytes'");
        return NULL;
    }
    cfg.unit_bytes = !strcmp(unit, "bytes");
    if (slab && !cfg.unit_bytes) {
        PyErr_SetString(PyExc_ValueError, "slab=True needs unit='bytes'");
        return NULL;
    }
    if (!(rate > 0) || rate > 1) {
        PyErr_SetString(PyExc_ValueError, "sample_rate must be in (0, 1]");
        return NULL;
    }
    if (warmup < 0 || warmup >= 1) {
        PyErr_SetString(PyExc_ValueError, "warmup must be in [0, 1)");
        return NULL;
    }
    if (object_size == 0 || object_size > UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "object_size must be in 1..2^32-1");
        return NULL;
    }
    cfg.slab = slab;
    cfg.policy_metadata = meta;
    cfg.default_size = (uint32_t)object_size;
    cfg.sample_rate = rate;
    cfg.warmup_fraction = warmup;
    cfg.fill_on_miss = fill;
    cfg.sample_adjust = adjust;
    cfg.presampled = presampled;
    if (salt_o != Py_None) {
        cfg.sample_salt = PyLong_AsUnsignedLongLongMask(salt_o);
        if (PyErr_Occurred())
            return NULL;
    }

    PyObject *result = NULL, *names_keep = NULL;
    const char **names = NULL;
    uint64_t *sizes = NULL;
    char *params = NULL;
    sim_result *res = NULL;
    int np = 0, ns = 0;
    arr ka = {0}, sa = {0}, ca = {0}, oa = {0};

    if (get_array(keys_o, K_U64, "keys", &ka) < 0)
        goto done;
    if (osz_o != Py_None && get_array(osz_o, K_U32, "object_sizes", &sa) < 0)
        goto done;
    if (cost_o != Py_None && get_array(cost_o, K_F64, "costs", &ca) < 0)
        goto done;
    if (ops_o != Py_None && get_array(ops_o, K_U8, "ops", &oa) < 0)
        goto done;
    if ((sa.data && sa.n != ka.n) || (ca.data && ca.n != ka.n) || (oa.data && oa.n != ka.n)) {
        PyErr_SetString(PyExc_ValueError, "object_sizes, costs and ops must have as many entries as keys");
        goto done;
    }
    if (oa.data && oa.owned == NULL) {
        for (Py_ssize_t i = 0; i < oa.n; i++)
            if (((const uint8_t *)oa.data)[i] > SIM_DELETE) {
                PyErr_Format(PyExc_ValueError, "ops[%zd]: must be 0..3", i);
                goto done;
            }
    }
    if (get_names(pol_o, &names_keep, &names, &np) < 0 || get_sizes(sizes_o, &sizes, &ns) < 0)
        goto done;
    params = params_string(params_o);
    if (!params)
        goto done;
    cfg.params = params;
    res = calloc((size_t)np * (size_t)ns, sizeof *res);
    if (!res) {
        PyErr_NoMemory();
        goto done;
    }
    sim_trace t = {.n = (size_t)ka.n, .keys = ka.data, .sizes = sa.data, .costs = ca.data, .ops = oa.data};
    char err[512] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sim_simulate_many(&t, names, np, sizes, ns, &cfg, threads, res, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        PyErr_SetString(PyExc_ValueError, err);
        goto done;
    }
    result = PyList_New(0);
    for (int i = 0; result && i < np * ns; i++) {
        sim_result *r = &res[i];
        PyObject *d = PyDict_New();
        if (!d || set_item(d, "policy", PyUnicode_FromString(r->policy)) < 0 ||
            set_item(d, "size", PyLong_FromUnsignedLongLong(r->size)) < 0 ||
            set_item(d, "hit_ratio", PyFloat_FromDouble(r->hit_ratio)) < 0 ||
            set_item(d, "byte_hit_ratio", PyFloat_FromDouble(r->byte_hit_ratio)) < 0 ||
            set_item(d, "requests", PyLong_FromUnsignedLongLong(r->requests)) < 0 ||
            set_item(d, "seconds", PyFloat_FromDouble(r->seconds)) < 0 ||
            set_item(d, "cpu_seconds", PyFloat_FromDouble(r->cpu_seconds)) < 0 ||
            set_item(d, "unit", PyUnicode_FromString(unit)) < 0 ||
            set_item(d, "hits", PyLong_FromUnsignedLongLong(r->hits)) < 0 ||
            set_item(d, "miss_cost_total", PyFloat_FromDouble(r->miss_cost_total)) < 0 ||
            set_item(d, "miss_cost_p99", PyFloat_FromDouble(r->miss_cost_p99)) < 0 ||
            set_item(d, "miss_cost_p99_misses", PyFloat_FromDouble(r->miss_cost_p99_misses)) < 0 ||
            set_item(d, "evictions", PyLong_FromUnsignedLongLong(r->evictions)) < 0 ||
            set_item(d, "sample_rate", PyFloat_FromDouble(r->sample_rate)) < 0 ||
            set_item(d, "simulated_size", PyLong_FromUnsignedLongLong(r->sim_size)) < 0 ||
            set_item(d, "hit_ratio_unadjusted", PyFloat_FromDouble(r->hit_ratio_raw)) < 0 ||
            set_item(d, "byte_hit_ratio_unadjusted", PyFloat_FromDouble(r->byte_hit_ratio_raw)) < 0 ||
            set_item(d, "expected_requests", PyFloat_FromDouble(r->expected_requests)) < 0 ||
            PyList_Append(result, d) < 0) {
            Py_XDECREF(d);
            Py_CLEAR(result);
            break;
        }
        Py_DECREF(d);
    }
done:
    arr_release(&ka);
    arr_release(&sa);
    arr_release(&ca);
    arr_release(&oa);
    free(names);
    Py_XDECREF(names_keep);
    free(sizes);
    free(params);
    free(res);
    return result;
}

static PyObject *py_exact_lru(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"keys", "sizes", NULL};
    PyObject *keys_o, *sizes_o;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO", kwlist, &keys_o, &sizes_o))
        return NULL;
    arr ka;
    uint64_t *sizes = NULL, *hits = NULL;
    int ns = 0;
    PyObject *result = NULL;
    if (get_array(keys_o, K_U64, "keys", &ka) < 0)
        return NULL;
    if (get_sizes(sizes_o, &sizes, &ns) < 0)
        goto done;
    hits = calloc((size_t)ns, sizeof *hits);
    if (!hits) {
        PyErr_NoMemory();
        goto done;
    }
    sim_trace t = {.n = (size_t)ka.n, .keys = ka.data};
    int64_t gets;
    Py_BEGIN_ALLOW_THREADS
    gets = sim_exact_lru_hits(&t, sizes, ns, hits);
    Py_END_ALLOW_THREADS
    if (gets < 0) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyList_New(0);
    for (int i = 0; result && i < ns; i++) {
        PyObject *d = PyDict_New();
        if (!d || set_item(d, "size", PyLong_FromUnsignedLongLong(sizes[i])) < 0 ||
            set_item(d, "hit_ratio", PyFloat_FromDouble(gets ? (double)hits[i] / (double)gets : 0)) < 0 ||
            set_item(d, "hits", PyLong_FromUnsignedLongLong(hits[i])) < 0 ||
            set_item(d, "requests", PyLong_FromLongLong(gets)) < 0 || PyList_Append(result, d) < 0) {
            Py_XDECREF(d);
            Py_CLEAR(result);
            break;
        }
        Py_DECREF(d);
    }
done:
    arr_release(&ka);
    free(sizes);
    free(hits);
    return result;
}

static PyObject *py_policies(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    PyObject *l = PyList_New(0);
    for (const char *const *p = sim_policy_names(); l && *p; p++) {
        PyObject *t = Py_BuildValue("(ss)", *p, sim_policy_describe(*p));
        if (!t || PyList_Append(l, t) < 0) {
            Py_XDECREF(t);
            Py_CLEAR(l);
            break;
        }
        Py_DECREF(t);
    }
    return l;
}

static PyObject *py_sampled(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned long long key, salt = 0x5a17ed5a17ull;
    double rate;
    if (!PyArg_ParseTuple(args, "Kd|K", &key, &rate, &salt))
        return NULL;
    return PyBool_FromLong(sim_sampled(key, rate, salt));
}

static PyMethodDef methods[] = {
    {"simulate", (PyCFunction)(void (*)(void))py_simulate, METH_VARARGS | METH_KEYWORDS,
     "simulate(keys, policies, sizes, *, object_sizes=None, costs=None, ops=None, unit='items',\n"
     "         slab=False, policy_metadata=False, object_size=1024, sample_rate=1.0, salt=None,\n"
     "         params=None, warmup=0.0, fill_on_miss=True, threads=0, sample_adjust=True,\n"
     "         presampled=False)\n"
     "         -> list[dict]\n"
     "Run every policy at every cache size over the request arrays."},
    {"exact_lru", (PyCFunction)(void (*)(void))py_exact_lru, METH_VARARGS | METH_KEYWORDS,
     "exact_lru(keys, sizes) -> list[dict]: exact LRU hit ratios (Mattson stack distances)."},
    {"policies", py_policies, METH_NOARGS, "policies() -> list of (name, description)."},
    {"sampled", py_sampled, METH_VARARGS,
     "sampled(key, rate[, salt]) -> bool: whether a key hash is in the spatial sample."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "hitcurve_sim",
                                    "Hitcurve cache policy simulator (C engine).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_hitcurve_sim(void)
{
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    PyModule_AddIntConstant(m, "GET", SIM_GET);
    PyModule_AddIntConstant(m, "SET", SIM_SET);
    PyModule_AddIntConstant(m, "ADD", SIM_ADD);
    PyModule_AddIntConstant(m, "DELETE", SIM_DELETE);
    PyModule_AddStringConstant(m, "__version__", "0.1.0");
    return m;
}
