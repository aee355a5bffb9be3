/* send.c — the effect of email.zg.
 *
 *   effect send_email(to: str, body: str) -> str;   -> zg_send_email
 *
 * "Sends" the email: appends it to the file $ZG_OUTBOX when that is set,
 * else prints it on stderr (stdout carries the workflow's result), and
 * returns a receipt.  A real mail client would go here; the idempotency
 * key (zgrt_call_key) lets a mail server drop a second copy after a
 * durable run's crash in the middle of the call.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zgrt.h"

int zg_send_email(zgrt_call *call)
{
    const char *to = zgrt_arg_str(call, 0);
    const char *body = zgrt_arg_str(call, 1);
    if (!strchr(to, '@')) return zgrt_fail(call, "`%s` is not an email address", to);
    const char *outbox = getenv("ZG_OUTBOX");
    FILE *f = outbox && *outbox ? fopen(outbox, "a") : stderr;
    if (!f) return zgrt_fail(call, "cannot open the outbox %s: %s", outbox, strerror(errno));
    int ok = fprintf(f, "To: %s\n\n%s\n---\n", to, body) >= 0;
    if (f != stderr && fclose(f) != 0) ok = 0;
    if (!ok) return zgrt_fail(call, "cannot write the outbox %s", outbox ? outbox : "(stderr)");
    char receipt[320];
    snprintf(receipt, sizeof receipt, "sent to %s (%zu bytes)", to, strlen(body));
    zgrt_ret_str(call, 0, receipt);
    return 0;
}
