/* suggest.h — "did you mean": the known word closest to a misspelt one
 * (prefix zv_).  Header only and self-contained, like vocab.h, so that the
 * compiler (names in programs), the driver (commands and options) and the
 * runtime (run options, inputs, model specs) suggest alike without
 * depending on one another.
 *
 *   ZvSuggest s;
 *   zv_suggest_init(&s, "chek");
 *   for (each known word w) zv_suggest_try(&s, w);
 *   if (s.best) ... "did you mean `%s`?", s.best
 *
 * A word is suggested when its edit distance (Levenshtein: one insertion,
 * deletion or substitution each) is at most 2 and less than the misspelt
 * word's length, so that short words are not "corrected" into anything;
 * case differences count as edits.  The first of equally close words
 * wins. */
#ifndef ZGC_VOCAB_SUGGEST_H
#define ZGC_VOCAB_SUGGEST_H

#include <string.h>

#define ZV_SUGGEST_MAX_DISTANCE 2

/* The edit distance of x and y, or ZV_SUGGEST_MAX_DISTANCE + 1 when it is
 * larger (or either is longer than 64 bytes). */
static inline int zv_edit_distance(const char *x, const char *y)
{
    size_t n = strlen(x), m = strlen(y);
    const int far = ZV_SUGGEST_MAX_DISTANCE + 1;
    if (n > 64 || m > 64 || (n > m ? n - m : m - n) > ZV_SUGGEST_MAX_DISTANCE) return far;
    int row[65];
    for (size_t j = 0; j <= m; j++) row[j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= m; j++) {
            int up = row[j];
            int best = diag + (x[i - 1] != y[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[m] < far ? row[m] : far;
}

typedef struct ZvSuggest {
    const char *word; /* the misspelt word */
    const char *best; /* the closest known word so far, or NULL */
    int distance;     /* its distance */
    char part[64];    /* zv_suggest_init_until: the word's copy */
} ZvSuggest;

static inline void zv_suggest_init(ZvSuggest *s, const char *word)
{
    s->word = word;
    s->best = NULL;
    s->distance = ZV_SUGGEST_MAX_DISTANCE + 1;
}

/* The same for the part of word before the first of stops: the name of
 * `--opt=VALUE` (stops "="), the backend of `openia:gpt` (stops ":").  A
 * part too long to be a known word suggests nothing. */
static inline void zv_suggest_init_until(ZvSuggest *s, const char *word, const char *stops)
{
    size_t n = strcspn(word, stops);
    if (n >= sizeof s->part) n = 0;
    memcpy(s->part, word, n);
    s->part[n] = 0;
    zv_suggest_init(s, s->part);
}

static inline void zv_suggest_try(ZvSuggest *s, const char *known)
{
    if (!known || !strcmp(known, s->word)) return;
    int d = zv_edit_distance(s->word, known);
    if (d < s->distance && d < (int)strlen(s->word)) {
        s->best = known;
        s->distance = d;
    }
}

#endif
