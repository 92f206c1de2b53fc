/*-------------------------------------------------------------------------
 *
 * counters.h
 *	  Per-process counts of the IDs generated, summed by uidgen_status().
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_COUNTERS_H
#define UIDGEN_COUNTERS_H

extern void counters_register(void);
extern void counters_count_snowflake(int64 id);
extern void counters_count_uuid(void);
extern void counters_sum(uint64 *snowflakes, uint64 *uuids, uint64 *last_snowflake);

#endif							/* UIDGEN_COUNTERS_H */
