/*-------------------------------------------------------------------------
 *
 * clock.h
 *	  The logical clocks of snowflake_next() and uuidv7_next().
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_CLOCK_H
#define UIDGEN_CLOCK_H

#include "core/shmem.h"

extern void clock_init(UidgenShared *s, uint64 floor, uint64 saved_at);
extern uint64 clock_wall_ticks(bool precise);
extern uint64 clock_monotonic_ticks(void);
extern uint64 clock_save_time(UidgenShared *s);
extern uint64 clock_latest(UidgenShared *s);
extern uint64 clock_next(UidgenShared *s, UidgenClockKind kind, uint64 granule,
						 bool precise);
extern void clock_observe(UidgenShared *s, uint64 logical);
extern void clock_raise(UidgenShared *s, uint64 floor);
extern uint64 clock_rebase_floor(uint64 origin);

#endif							/* UIDGEN_CLOCK_H */
