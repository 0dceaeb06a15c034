/* C that fools a regex or a brace counter. */
#include <stddef.h>
#include <string.h>

#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define BODY { return 0; }
#define REQ_FIELDS                 \
    int type;                      \
    /* private */                  \
    void *reserved[2]; /* spare */ \
    PRIVATE_FIELDS                 \

/* A request, after a macro with comments (libuv's uv.h). */
struct req {
    int id;
};

struct fwd;

/* A list node. */
struct node {
    struct node *next;
    struct { int a, b; } pair;
    union { int i; float f; } value;
};

/* A config with a typedef over two lines. */
typedef struct config {
    const char *name;   /* "}" */
    int (*hook)(int);
} config_t;

typedef int (*handler_fn)(void *ctx, const char *msg);

typedef unsigned long word_t;

enum color { RED, GREEN = 2, BLUE };

union number { int i; double d; };

static const char *text = "int fake(void) { return 0; }";
static const char brace = '{';

int prototype(int a, char *b);

/* Counts the nodes; a comment with a brace { inside. */
static size_t
count(const struct node *n)
{
    size_t k = 0;
    for (; n; n = n->next) {
        k++;
    }
    return k;
}

// A line comment above.
int *pointer_to(int *p) { return p; }

char **split(const char *s, char sep)
{
    char **out = NULL;
    if (s == NULL) {
        return out;   /* } */
    }
    (void)sep;
    return out;
}

int max_of(int a, int b) { return MAX(a, b); }

#ifndef USE_SLOW
static int fast(void) { return 1; }
#endif

void (*get_handler(int which))(int)
{
    (void)which;
    return NULL;
}

int main(int argc, char **argv)
{
    struct node n = { 0 };
    (void)argc; (void)argv;
    return (int)count(&n) + max_of(1, 2) + (text[0] == brace);
}
