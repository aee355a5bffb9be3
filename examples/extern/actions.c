/* actions.c — the C actions of score.zg.
 *
 *   extern pure readability(text: str) -> float;   -> zg_readability
 *   effect publish(text: str, score: float) -> str; -> zg_publish
 *
 * Each function reads its arguments with zgrt_arg_*(), sets every result
 * with zgrt_ret_*() and returns 0, or returns zgrt_fail(call, …) to stop
 * the run with a message.  Build: see README.md.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "zgrt.h"

/* A readability score in 0..1: the share of words of at most 7 letters,
 * less a penalty for sentences longer than 20 words.  Pure: the result
 * depends on the argument only. */
int zg_readability(zgrt_call *call)
{
    const char *text = zgrt_arg_str(call, 0);
    int words = 0, short_words = 0, sentences = 0, len = 0;
    for (const char *p = text;; p++) {
        if (isalnum((unsigned char)*p) || (unsigned char)*p >= 0x80) {
            len++;
            continue;
        }
        if (len > 0) {
            words++;
            short_words += len <= 7;
            len = 0;
        }
        if (*p == '.' || *p == '!' || *p == '?') sentences++;
        if (*p == 0) break;
    }
    if (words == 0) return zgrt_fail(call, "nothing to score: the text has no words");
    if (sentences == 0) sentences = 1;
    double score = (double)short_words / words;
    double per_sentence = (double)words / sentences;
    if (per_sentence > 20) score -= (per_sentence - 20) / 100;
    if (score < 0) score = 0;
    zgrt_ret_float(call, 0, score);
    return 0;
}

/* Publishes the text: here, prints it on stderr (stdout carries the
 * workflow's result) and returns a receipt. */
int zg_publish(zgrt_call *call)
{
    const char *text = zgrt_arg_str(call, 0);
    double score = zgrt_arg_float(call, 1);
    if (strlen(text) > 10000)
        return zgrt_fail(call, "the text is too long to publish (%zu bytes)", strlen(text));
    fprintf(stderr, "[%s] publishing (score %.2f): %s\n", zgrt_call_lifeline(call), score, text);
    char receipt[64];
    snprintf(receipt, sizeof receipt, "published %zu bytes (score %.2f)", strlen(text), score);
    zgrt_ret_str(call, 0, receipt);
    return 0;
}
