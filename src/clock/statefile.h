/*-------------------------------------------------------------------------
 *
 * statefile.h
 *	  The durable high-water mark and settings record ($PGDATA/uidgen.state).
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_STATEFILE_H
#define UIDGEN_STATEFILE_H

#include "port/pg_crc32c.h"

#include "clock/clock.h"
#include "core/shmem.h"

#define UIDGEN_STATE_FILE "uidgen.state"

/* The file's contents. */
typedef struct StateFileData
{
	uint32		magic;
	uint32		version;
	uint64		hwm;			/* no tick above this was handed out */
	uint64		saved_at;		/* real time when written (clock_save_time) */
	UidgenSettings settings;	/* the settings IDs were issued under */
	bool		rebase_pending; /* recovery ended, clock not yet moved */
	bool		upgrade_unknown;	/* pg_upgrade brought no mark (0.2.0: was
									 * padding, so false in 0.1.0's files) */
	/* from here on new in 0.2.0 (version 3); 0.1.0's CRC came here */
	uint8		copy_reason;	/* UidgenCopyReason: a copy not settled yet */
	bool		blocks_fenced;	/* block sequences wait for a take-over */
	uint32		skip_nonce;		/* random, drawn at each take-over: the skip
								 * key of block sequences (copies.c); 0 if none */
	int32		origin_worker;	/* worker id of the server copied from, or -1 */
	uint64		origin_mark;	/* highest mark replayed from its WAL */
	UidgenIdentity vouched;		/* the server IDs were issued by */
	pg_crc32c	crc;			/* of everything above */
} StateFileData;

/* What reading a state file found. */
typedef enum StateFileRead
{
	STATE_READ_OK,
	STATE_READ_MISSING,
	STATE_READ_CORRUPT
} StateFileRead;

extern StateFileRead statefile_read_at(const char *path, StateFileData *d);
extern bool statefile_write_at(const char *path, StateFileData *d, int elevel);
extern uint64 statefile_load(UidgenShared *s, uint64 *saved_at);
extern void statefile_cover(UidgenShared *s, uint64 tick);
extern void statefile_refresh(UidgenShared *s);
extern void statefile_save(UidgenShared *s, int elevel);
extern void statefile_fill(UidgenShared *s, StateFileData *d, uint64 hwm);
extern void statefile_commit(UidgenShared *s, StateFileData *d, uint64 floor);
extern void statefile_check_usable(UidgenShared *s);

/*
 * The generators' way to a tick: the next tick of a clock (clock.c), handed
 * out only once a durable mark covers it.  Inline, for the hot path.
 */
static inline uint64
statefile_next_tick(UidgenShared *s, UidgenClockKind kind, uint64 granule,
					bool precise)
{
	uint64		tick = clock_next(s, kind, granule, precise);

	if (unlikely(tick > pg_atomic_read_u64(&s->hwm_refresh_at)))
		statefile_cover(s, tick);
	return tick;
}

#endif							/* UIDGEN_STATEFILE_H */
