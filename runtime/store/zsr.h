/* zsr.h — the stores of a run (prefix zsr_): the program's stores
 * (zgrt_program.stores) opened with the store library (zst.h) as the run
 * options say, behind the core's interface zri_stores (rt.h).
 *
 * Where a store lives (docs/runtime.md, "Stores"): in memory (the
 * default; one process), or in a SQLite file, shared by processes:
 * --store-file FILE (FILE for a program with one store, FILE.S for store
 * S of several) or --store-dir DIR (DIR/S.db).  --oprecords FILE appends
 * every operation's OpRecord to FILE (several stores: FILE.S). */
#ifndef ZSR_H
#define ZSR_H

#include "rt.h"

typedef struct zsr_stores zsr_stores;

/* Opens every store of p (none: NULL without an error, *err empty).
 * self >= 0: a per-lifeline process, which needs shared stores: SQLite
 * (--store-file, --store-dir) or, given nats (a natsConnection * the
 * caller keeps open while the stores are), the JetStream key-value
 * bucket "zgs-RUN-STORE" of run o->nats_run for each store.  NULL with a
 * message in err on failure. */
zsr_stores *zsr_open(const zgrt_program *p, const zri_options *o, int32_t self, void *nats,
                     char *err, size_t errlen);
zri_stores zsr_interface(zsr_stores *s);
void zsr_close(zsr_stores *s);

#endif
