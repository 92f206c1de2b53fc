/*-------------------------------------------------------------------------
 *
 * reservation.h
 *	  A reservation of IDs from a block sequence, as the allocator works on
 *	  it and answers it: the types every block module passes around.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_RESERVATION_H
#define UIDGEN_RESERVATION_H

#include "datatype/timestamp.h"

/* Largest number of IDs one reservation may take (and largest block size). */
#define ALLOC_MAX_IDS 1000000000
#define ALLOC_MSG_LEN 160

/* How a reservation ended. */
typedef enum AllocOutcome
{
	ALLOC_OK,					/* first..last are reserved and committed */
	ALLOC_UNKNOWN,				/* no such sequence */
	ALLOC_EXHAUSTED,			/* past the bound; exhausted is now set */
	ALLOC_LOCKED,				/* the row or the table is locked: see locker */
	ALLOC_CLOCK_BEHIND,			/* the row counts in a later period than now */
	ALLOC_FAILED				/* the allocator's transaction failed */
} AllocOutcome;

/* The answer to one reservation. */
typedef struct AllocResult
{
	AllocOutcome outcome;
	int64		first;
	int64		last;
	int64		requested;		/* n asked for (the block size if 0) */
	int32		block_size;		/* for OK: the row's block size */
	int64		increment;		/* for OK and EXHAUSTED: first..last's step */
	bool		is_table;		/* for OK: of strategy 'table' */
	int64		next_block_start;	/* for EXHAUSTED */
	int64		bound;			/* for EXHAUSTED: max_value (min_value counting down) */
	int32		period;			/* for OK and EXHAUSTED: the period (0: none);
								 * for CLOCK_BEHIND: the row's */
	int32		period_now;		/* for CLOCK_BEHIND: the period of the time now */
	TimestampTz period_start;	/* for OK with a period: when it began */
	TimestampTz period_end;		/* and when it ends */
	TransactionId locker;		/* for LOCKED: the row's xmax, if valid */
	bool		locker_is_multi;	/* locker is a MultiXactId */
	bool		locker_lock_only;	/* and it only locks the row */
	Oid			locked_table;	/* for LOCKED: the table, not the row */
	int			sqlerrcode;		/* for FAILED */
	char		message[ALLOC_MSG_LEN]; /* for FAILED */
} AllocResult;

/* One reservation as the allocator works on it. */
typedef struct AllocWork
{
	char		name[NAMEDATALEN];
	int64		n;				/* 0: the row's block size */
	bool		for_cache;		/* a cache refill: up to n IDs (at least 1) */
	int			index;			/* PGPROC number or cache entry */
	uint64		ticket;			/* which request of that slot this is */
	int			order;			/* arrival order within a round */
	AllocResult result;
} AllocWork;

/*
 * IDs left from next on, increment apart, up to max_value (counting down:
 * min_value) and within |increment| of the last bigint: seq_room() of the
 * install script, for the values in hand.
 */
static inline uint64
reservation_room(int64 next, int64 increment, int64 min_value, int64 max_value)
{
	int64		bound;

	if (increment > 0)
	{
		bound = Min(max_value, PG_INT64_MAX - increment);
		return next > bound ? 0 : ((uint64) bound - (uint64) next) / (uint64) increment + 1;
	}
	bound = Max(min_value, PG_INT64_MIN - increment);
	return next < bound ? 0 : ((uint64) next - (uint64) bound) / (uint64) -increment + 1;
}

/* Fail one request with an error code and a message. */
static inline void
reservation_fail(AllocResult *r, int sqlerrcode, const char *message)
{
	r->outcome = ALLOC_FAILED;
	r->sqlerrcode = sqlerrcode;
	strlcpy(r->message, message, ALLOC_MSG_LEN);
}

#endif							/* UIDGEN_RESERVATION_H */
