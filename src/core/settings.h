/*-------------------------------------------------------------------------
 *
 * settings.h
 *	  The uidgen.* settings (all of them, settings.c) and the constants of
 *	  the tick every generator counts in.  A leaf: it includes no other
 *	  uidgen module, and every module may read it.
 *
 * The logical clocks behind snowflake_next() and uuidv7_next() count ticks of
 * 2^-20 milliseconds since the Unix epoch in an unsigned 64-bit integer,
 * which lasts until the year 2527.  A snowflake ID uses the top bits of a
 * tick (milliseconds and a sequence); a UUIDv7 uses all of them.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_SETTINGS_H
#define UIDGEN_SETTINGS_H

#define UIDGEN_TICK_SHIFT	20
#define UIDGEN_TICKS_PER_MS (UINT64CONST(1) << UIDGEN_TICK_SHIFT)
#define UIDGEN_MS_TO_TICKS(ms) ((uint64) (ms) << UIDGEN_TICK_SHIFT)
#define UIDGEN_TICKS_TO_MS(t) ((t) >> UIDGEN_TICK_SHIFT)

/* Widest sequence field: a snowflake ID cannot be finer than a tick. */
#define UIDGEN_MAX_SEQUENCE_BITS UIDGEN_TICK_SHIFT
/* A snowflake ID keeps at least 41 timestamp bits (69 years). */
#define UIDGEN_MIN_TIMESTAMP_BITS 41
#define UIDGEN_MAX_LAYOUT_BITS (63 - UIDGEN_MIN_TIMESTAMP_BITS)

/* The snowflake layout and identity: restart-only settings. */
typedef struct UidgenSettings
{
	int32		worker_id;		/* 0 when not set (see worker_id_set) */
	bool		worker_id_set;	/* uidgen.worker_id is in the configuration */
	int32		worker_bits;
	int32		sequence_bits;
	int64		epoch_ms;		/* uidgen.epoch in ms since the Unix epoch */
} UidgenSettings;

/* The clock and the snowflake layout */
extern UidgenSettings uidgen_settings;
extern int	uidgen_max_clock_drift;
extern char *uidgen_worker_id_registry;
extern int	uidgen_worker_lease_ms;

/* Worker ids are leased from a registry (uidgen.worker_id_registry is set). */
extern bool uidgen_registry_on;

/* citus is in shared_preload_libraries: a node of a Citus cluster. */
extern bool uidgen_citus_preloaded;

/* Block sequences */
extern int	uidgen_block_timeout;
extern int	uidgen_citus_block_lease;
extern int	uidgen_block_databases;
extern int	uidgen_allocator_idle_timeout;
extern int	uidgen_block_cache_entries;
extern int	uidgen_promotion_skip;

#ifdef UIDGEN_CRASH_POINTS
/* Test builds only: what a process does at the armed crash point. */
typedef enum UidgenCrashAction
{
	UIDGEN_CRASH_KILL,
	UIDGEN_CRASH_WAIT,
	UIDGEN_CRASH_ERROR
} UidgenCrashAction;

extern char *uidgen_crash_point;
extern int	uidgen_crash_action;
#endif

extern uint64 uidgen_drift_ticks(void);
extern void settings_define(void);

#endif							/* UIDGEN_SETTINGS_H */
