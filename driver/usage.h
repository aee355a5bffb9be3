/* usage.h — errors of a bad command line (prefix zus_).
 *
 * One error per mistake: "zgc: error: MESSAGE", a suggestion when the
 * mistake is an unknown option or command close to one the command knows
 * (the words are taken from the command's own usage text, so the
 * suggestions follow the help), and where the help is.  Exit status 2. */
#ifndef ZGC_DRIVER_USAGE_H
#define ZGC_DRIVER_USAGE_H

/* Prints the error fmt (with one %s, arg) for the command whose usage text
 * is usage; returns 2.  A message starting "unknown option `X`" or
 * "unknown command `X`" gets a "did you mean" when a word of the usage
 * text is close to X. */
int zus_error(const char *usage, const char *fmt, const char *arg);

#endif
