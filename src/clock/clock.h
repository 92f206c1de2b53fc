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

/*
 * The logical clocks: snowflake IDs and UUIDs each have their own, so that a
 * burst of one kind does not run the other's timestamps ahead.
 */
typedef enum UidgenClockKind
{
	UIDGEN_CLOCK_SNOWFLAKE,
	UIDGEN_CLOCK_UUID,
	UIDGEN_NCLOCKS
} UidgenClockKind;

extern void clock_register(void);
extern void clock_start(uint64 floor, uint64 saved_at);
extern uint64 clock_wall_ticks(bool precise);
extern uint64 clock_monotonic_ticks(void);
extern uint64 clock_boottime_ticks(void);
extern uint64 clock_save_time(void);
extern uint64 clock_latest(void);
extern uint64 clock_next(UidgenClockKind kind, uint64 granule, bool precise);
extern void clock_observe(uint64 logical);
extern void clock_raise(uint64 floor);
extern uint64 clock_rebase_floor(uint64 origin);
extern uint64 clock_episodes(void);
extern uint64 clock_waits(void);

#endif							/* UIDGEN_CLOCK_H */
