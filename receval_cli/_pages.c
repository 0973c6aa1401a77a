/* receval's Parquet page walk: the pages of one column chunk, their headers decoded and
 * their bytes checksummed, as inputs/parquet_pages.py's Python walk finds them, page for
 * page (tests/inputs/test_parquet_pages.py runs both on the same files and on fuzzed headers).
 *
 *   walk(data, start, end): data is a buffer (the file's memory map); the chunk's bytes
 *       are data[start:end] (0 <= start, end <= len(data)). From start on, each page is a
 *       Thrift compact-protocol PageHeader followed by compressed_page_size bytes; the walk
 *       stops at the end, or at bytes that do not decode as a header (anything malformed,
 *       nested deeper than 64 values, a size that is not an integer, is negative or runs
 *       past the end). A list of (page, offset, body, size, recorded, computed), one a
 *       page: page is 0 for the dictionary page (type 2), else the data page's number from
 *       1; offset the header's, body the page's bytes' offset; recorded the header's crc
 *       (field 4, its low 32 bits unsigned) or None, computed zlib's CRC-32 of the page's
 *       bytes where a crc is recorded, else None.
 *
 * Only PageHeader's fields 1 (type), 3 (compressed_page_size) and 4 (crc) are kept, the
 * last of each where one repeats, and only where it is an integer (i16, i32, i64); every
 * other value is skipped, as the Python reader skips it. The Python reader's integers have
 * no bound: a varint of up to 10 bytes (70 bits) is read here as its low 64 bits and a flag
 * for the bits above, which is all the comparisons need (a field id or a size that large
 * matches nothing, and a crc keeps its low 32 bits). The CRC-32 is zlib's (the polynomial
 * 0xEDB88320, reflected, its value inverted before and after), computed here by tables
 * (no zlib headers needed to build).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

#define MAX_DEPTH 64
#define DICTIONARY_PAGE 2
/* a field id beyond this (either sign) never comes back to 1, 3 or 4: fields are added to
 * by at most 15 a byte */
#define FIELD_LIMIT ((int64_t)1 << 62)

enum { T_TRUE = 1, T_FALSE, T_BYTE, T_I16, T_I32, T_I64, T_DOUBLE, T_BINARY, T_LIST, T_SET,
       T_MAP, T_STRUCT, T_UUID };

typedef struct {
    const uint8_t *data;
    Py_ssize_t pos, end;
} Reader;

/* ------------------------------------------------------------------------------------ */
/* CRC-32, slicing by 8 */

static uint32_t crc_table[8][256];

static void crc_init(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = crc_table[0][n];
        for (int t = 1; t < 8; t++) {
            c = crc_table[0][c & 0xFF] ^ (c >> 8);
            crc_table[t][n] = c;
        }
    }
}

static uint32_t crc32_of(const uint8_t *p, Py_ssize_t n) {
    uint32_t c = 0xFFFFFFFFu;
    while (n >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                           (uint32_t)p[3] << 24);
        uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
                      (uint32_t)p[7] << 24;
        c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^
            crc_table[5][(lo >> 16) & 0xFF] ^ crc_table[4][lo >> 24] ^
            crc_table[3][hi & 0xFF] ^ crc_table[2][(hi >> 8) & 0xFF] ^
            crc_table[1][(hi >> 16) & 0xFF] ^ crc_table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n-- > 0) c = crc_table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* ------------------------------------------------------------------------------------ */
/* the compact protocol: every function returns 0, or -1 where the bytes are malformed */

static int take(Reader *r, uint64_t count) {
    if (count > (uint64_t)(r->end - r->pos)) return -1;
    r->pos += (Py_ssize_t)count;
    return 0;
}

/* a varint of at most 10 bytes: its low 64 bits, and *big where bits above are set */
static int varint(Reader *r, uint64_t *value, int *big) {
    uint64_t v = 0;
    int shift = 0;
    *big = 0;
    for (;;) {
        if (r->pos >= r->end) return -1;
        uint64_t byte = r->data[r->pos++];
        uint64_t bits = byte & 0x7F;
        v |= bits << shift;
        if (shift == 63 && (bits >> 1)) *big = 1;
        if (byte < 0x80) {
            *value = v;
            return 0;
        }
        shift += 7;
        if (shift > 63) return -1;
    }
}

/* a zigzag varint as a clamped signed value (for field ids and sizes) and its low 32 bits */
typedef struct {
    int64_t value; /* exact within +-2^62, else clamped to +-2^62 */
    uint32_t low;  /* the low 32 bits of the exact value */
} Integer;

static int zigzag(Reader *r, Integer *out) {
    uint64_t v;
    int big;
    if (varint(r, &v, &big) < 0) return -1;
    uint64_t bits = (v >> 1) ^ (0 - (v & 1));
    out->low = (uint32_t)bits;
    int64_t value = (int64_t)bits;
    if (big) value = (v & 1) ? -FIELD_LIMIT : FIELD_LIMIT;
    if (value > FIELD_LIMIT) value = FIELD_LIMIT;
    if (value < -FIELD_LIMIT) value = -FIELD_LIMIT;
    out->value = value;
    return 0;
}

static int skip_struct(Reader *r, int depth);
static int skip_collection(Reader *r, int depth);

static int skip_value(Reader *r, int kind, int depth) {
    if (depth > MAX_DEPTH) return -1;
    uint64_t size;
    int big;
    switch (kind) {
    case T_TRUE:
    case T_FALSE:
    case T_BYTE:
        return take(r, 1);
    case T_I16:
    case T_I32:
    case T_I64:
        return varint(r, &size, &big);
    case T_DOUBLE:
        return take(r, 8);
    case T_UUID:
        return take(r, 16);
    case T_BINARY:
        if (varint(r, &size, &big) < 0 || big) return -1;
        return take(r, size);
    case T_LIST:
    case T_SET:
        return skip_collection(r, depth);
    case T_MAP: {
        if (varint(r, &size, &big) < 0 || big) return -1;
        if (size == 0) return 0;
        if (r->pos >= r->end) return -1;
        int types = r->data[r->pos++];
        if (size > (uint64_t)(r->end - r->pos) / 2) return -1; /* 2 bytes an entry at least */
        for (uint64_t i = 0; i < size; i++) {
            if (skip_value(r, types >> 4, depth + 1) < 0) return -1;
            if (skip_value(r, types & 0x0F, depth + 1) < 0) return -1;
        }
        return 0;
    }
    case T_STRUCT:
        return skip_struct(r, depth + 1);
    default:
        return -1;
    }
}

static int skip_collection(Reader *r, int depth) {
    if (r->pos >= r->end) return -1;
    int header = r->data[r->pos++];
    uint64_t size = (uint64_t)(header >> 4);
    int big = 0;
    if (size == 15 && (varint(r, &size, &big) < 0 || big)) return -1;
    if (size > (uint64_t)(r->end - r->pos)) return -1; /* a byte an element at least */
    for (uint64_t i = 0; i < size; i++)
        if (skip_value(r, header & 0x0F, depth + 1) < 0) return -1;
    return 0;
}

/* a field's header: its type (0: the struct's end) and its id, from the previous one */
static int field_header(Reader *r, int *kind, int64_t *field) {
    if (r->pos >= r->end) return -1;
    int header = r->data[r->pos++];
    *kind = header & 0x0F;
    if (*kind == 0) return 0;
    int delta = header >> 4;
    if (delta) {
        *field += delta;
        return 0;
    }
    Integer id;
    if (zigzag(r, &id) < 0) return -1;
    *field = id.value;
    return 0;
}

static int skip_struct(Reader *r, int depth) {
    int64_t field = 0;
    for (;;) {
        int kind;
        if (field_header(r, &kind, &field) < 0) return -1;
        if (kind == 0) return 0;
        if (kind == T_TRUE || kind == T_FALSE) continue; /* a bool field: the type is the value */
        if (skip_value(r, kind, depth) < 0) return -1;
    }
}

/* PageHeader's kept fields: type (1), compressed_page_size (3), crc (4) */
typedef struct {
    int found[5]; /* the last value of the field was an integer */
    Integer value[5];
} Header;

static int page_header(Reader *r, Header *h) {
    int64_t field = 0;
    memset(h, 0, sizeof *h);
    for (;;) {
        int kind;
        if (field_header(r, &kind, &field) < 0) return -1;
        if (kind == 0) return 0;
        int kept = field == 1 || field == 3 || field == 4;
        if (kind == T_I16 || kind == T_I32 || kind == T_I64) {
            Integer value;
            if (zigzag(r, &value) < 0) return -1;
            if (kept) {
                h->found[field] = 1;
                h->value[field] = value;
            }
            continue;
        }
        if (kept) h->found[field] = 0; /* a value of another type: not an integer */
        if (kind == T_TRUE || kind == T_FALSE) continue;
        if (skip_value(r, kind, 0) < 0) return -1;
    }
}

/* ------------------------------------------------------------------------------------ */

typedef struct {
    Py_ssize_t offset, body, size;
    long page;
    int has_crc;
    uint32_t recorded, computed;
} Found;

static PyObject *crc_or_none(int has, uint32_t value) {
    if (!has) Py_RETURN_NONE;
    return PyLong_FromUnsignedLong(value);
}

static PyObject *walk(PyObject *self, PyObject *args) {
    Py_buffer buffer;
    Py_ssize_t start, end;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nn", &buffer, &start, &end)) return NULL;
    if (start < 0 || end > buffer.len) {
        PyBuffer_Release(&buffer);
        PyErr_SetString(PyExc_ValueError, "walk: start and end must lie within the buffer");
        return NULL;
    }
    Py_ssize_t held = 0, room = 64;
    Found *found = malloc(sizeof(Found) * (size_t)room);
    if (found == NULL) {
        PyBuffer_Release(&buffer);
        return PyErr_NoMemory();
    }
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    Reader r = {(const uint8_t *)buffer.buf, start, end};
    long number = 0;
    while (r.pos < end) {
        Py_ssize_t offset = r.pos;
        Header h;
        if (page_header(&r, &h) < 0) break;
        if (!h.found[3] || h.value[3].value < 0 || h.value[3].value > end - r.pos) break;
        if (held == room) {
            Found *grown = realloc(found, sizeof(Found) * (size_t)(room * 2));
            if (grown == NULL) {
                failed = 1;
                break;
            }
            found = grown;
            room *= 2;
        }
        Found *page = &found[held++];
        int dictionary = h.found[1] && h.value[1].value == DICTIONARY_PAGE;
        number += !dictionary;
        page->page = dictionary ? 0 : number;
        page->offset = offset;
        page->body = r.pos;
        page->size = (Py_ssize_t)h.value[3].value;
        page->has_crc = h.found[4];
        page->recorded = h.value[4].low;
        page->computed = page->has_crc ? crc32_of(r.data + r.pos, page->size) : 0;
        r.pos += page->size;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buffer);
    if (failed) {
        free(found);
        return PyErr_NoMemory();
    }
    PyObject *list = PyList_New(held);
    for (Py_ssize_t i = 0; list != NULL && i < held; i++) {
        Found *page = &found[i];
        PyObject *item = Py_BuildValue(
            "(lnnnNN)", page->page, page->offset, page->body, page->size,
            crc_or_none(page->has_crc, page->recorded),
            crc_or_none(page->has_crc, page->computed));
        if (item == NULL) Py_CLEAR(list);
        else PyList_SET_ITEM(list, i, item);
    }
    free(found);
    return list;
}

static PyMethodDef methods[] = {
    {"walk", walk, METH_VARARGS,
     "walk(data, start, end): the pages of the column chunk in data[start:end]"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_pages", "receval's Parquet page walk (inputs/parquet_pages.py)",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__pages(void) {
    crc_init();
    return PyModule_Create(&module);
}
