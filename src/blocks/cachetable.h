/*-------------------------------------------------------------------------
 *
 * cachetable.h
 *	  The entries of the seq_next() cache and the table that assigns them.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_CACHETABLE_H
#define UIDGEN_CACHETABLE_H

#include "miscadmin.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"

#include "blocks/reservation.h"

typedef enum RefillState
{
	REFILL_IDLE,
	REFILL_REQUESTED,			/* waiting for the allocator to take it */
	REFILL_TAKEN				/* the allocator is working on it */
} RefillState;

/* One (database, sequence): its ranges, under its mutex (blockcache.c). */
typedef struct CacheEntry
{
	slock_t		mutex;
	Oid			dbid;			/* InvalidOid: unused */
	char		name[NAMEDATALEN];
	uint64		incarnation;	/* bumped when emptied or reassigned */
	TimestampTz last_used;		/* statement start of the last carve (LRU) */
	uint64		carves;			/* carves ever made from the entry */
	uint64		carves_swept;	/* carves as the allocator's last sweep saw them */
	TimestampTz swept_used;		/* the last sweep that saw new carves */
	int64		increment;		/* the step of the ranges held (one row's) */
	int32		period;			/* numbered per period: theirs (0: none) */
	TimestampTz period_start;	/* when it began */
	TimestampTz period_end;		/* when it ends: nothing is carved after */
	int64		cur_next;		/* next ID of the current range */
	int64		cur_left;		/* IDs left in it */
	int64		refill_left;	/* ask for a spare once fewer are left */
	int64		spare_first;	/* the spare range */
	int64		spare_count;	/* 0: none */
	bool		is_table;		/* strategy 'table': seq_reserve_block() carves */
	int32		block_size;		/* as the last range came (0: unknown) */
	bool		exhausted;		/* a caller got 2200H: carve nothing more */
	int64		want;			/* IDs a waiting caller needs (0: block_size) */
	int64		step;			/* IDs the next refill asks for (0: block_size) */
	int64		range_count;	/* IDs of the last range delivered */
	TimestampTz range_at;		/* when it was delivered */
	RefillState refill;
	uint64		refill_ticket;	/* incarnation the refill was taken for */
	uint64		taken_by;		/* allocator token */
	int64		flight_first;	/* the refill committed, not stored yet */
	int64		flight_count;	/* 0: none (for cachetable_unprefetch()) */
	int64		flight_end;		/* the value after its last one */
	uint32		failures;		/* refills that failed, ever */
	AllocResult failure;		/* the last failed refill */
	ConditionVariable cv;		/* broadcast when the entry changes */
} CacheEntry;

/* Is the entry the one of this sequence of this database?  Mutex held. */
static inline bool
cachetable_is(CacheEntry *e, const char *name)
{
	return e->dbid == MyDatabaseId && strcmp(e->name, name) == 0;
}

extern void cachetable_register(void);
extern CacheEntry *cachetable_entry(int index);
extern int	cachetable_size(void);
/* cachetable_find(): the sequence is of strategy 'gapless' (no entry). */
#define CACHE_GAPLESS (-1)

extern int	cachetable_lookup(const char *name, Oid funcid);
extern int	cachetable_find(const char *name, Oid funcid);
extern bool cachetable_release_idle(Oid dbid, int timeout_s);
extern int64 cachetable_unprefetch(const char *name, int64 end);
extern void cachetable_forget(int index, const char *name);
extern void cachetable_invalidate(Oid dbid, const char *name);
extern void cachetable_wake_database(Oid dbid);

#endif							/* UIDGEN_CACHETABLE_H */
