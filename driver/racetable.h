/* racetable.h — `zgc anomalies --static FILE.zg` (prefix zrc_): the race
 * analysis of a workflow's store operations (compiler/stores.c) as a
 * table or as JSON. */
#ifndef ZGC_DRIVER_RACETABLE_H
#define ZGC_DRIVER_RACETABLE_H

extern const char zrc_usage[];
/* argv[0] is "anomalies"; one of the arguments is --static.  Returns the
 * exit status. */
int zrc_main(int argc, char **argv);

#endif
