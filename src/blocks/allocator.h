/*-------------------------------------------------------------------------
 *
 * allocator.h
 *	  The block allocator's shared state and request protocol: backends
 *	  ask the allocator worker of their database (allocworker.c) for ranges
 *	  of block sequences (id_sequences) through shared memory.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_ALLOCATOR_H
#define UIDGEN_ALLOCATOR_H

#include "datatype/timestamp.h"
#include "storage/lwlock.h"

/* Largest number of IDs one reservation may take (and largest block size). */
#define ALLOC_MAX_IDS 1000000000
/* The ID that is never issued, so that next_block_start can follow any. */
#define ALLOC_ID_CEILING (PG_INT64_MAX - 1)
#define ALLOC_MSG_LEN 160

/* How a reservation ended. */
typedef enum AllocOutcome
{
	ALLOC_OK,					/* first..last are reserved and committed */
	ALLOC_UNKNOWN,				/* no such sequence */
	ALLOC_EXHAUSTED,			/* past max_value; exhausted is now set */
	ALLOC_LOCKED,				/* the row or the table is locked: see locker */
	ALLOC_FAILED				/* the allocator's transaction failed */
} AllocOutcome;

/* The answer to one reservation. */
typedef struct AllocResult
{
	AllocOutcome outcome;
	int64		first;
	int64		last;
	int64		requested;		/* n asked for (the block size if 0) */
	int64		next_block_start;	/* for EXHAUSTED */
	int64		max_value;		/* for EXHAUSTED */
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
	bool		for_cache;		/* a seq_next() refill, not a backend */
	int			index;			/* PGPROC number or cache entry */
	uint64		ticket;			/* which request of that slot this is */
	int			order;			/* arrival order within a round */
	AllocResult result;
} AllocWork;

extern bool allocator_is_this_process(void);
extern void allocator_register(void);
extern void allocator_reserve(const char *name, int64 n, AllocResult *res);
extern bool allocator_wake(Oid dbid, bool raise);
extern bool allocator_token_alive(uint64 token);
extern void allocator_request_exit(Oid dbid);

/* For the allocator worker (allocworker.c) */
extern Oid	allocator_attach(int slot, uint32 generation);
extern Oid	allocator_detach(void);
extern bool allocator_retire(Oid dbid, bool (*other_work) (Oid dbid));
extern uint64 allocator_my_token(void);
extern bool allocator_exit_requested(void);
extern int	allocator_max_requests(void);
extern int	allocator_take_requests(Oid dbid, AllocWork *works, int max);
extern void allocator_answer(const AllocWork *works, int nworks);

#endif							/* UIDGEN_ALLOCATOR_H */
