/*-------------------------------------------------------------------------
 *
 * blockcache.h
 *	  The shared cache behind seq_next(): per (database, sequence), the
 *	  range IDs are being served from and the next range, fetched ahead.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_BLOCKCACHE_H
#define UIDGEN_BLOCKCACHE_H

#include "datatype/timestamp.h"

#include "blocks/reservation.h"

/* What an entry holds, for seq_prefetched(). */
typedef struct CacheReport
{
	char		name[NAMEDATALEN];
	bool		known;			/* has it held a range? */
	int64		next_id;		/* the next ID it carves (if known) */
	int64		ahead;			/* IDs held: the current and spare range */
	int64		refill;			/* IDs the next refill asks for (0: a block) */
	TimestampTz last_used;
} CacheReport;

extern int	blockcache_report(Oid dbid, CacheReport *out, int max);
/* What the cache did with a request. */
typedef enum CacheGot
{
	BLOCKCACHE_SERVED,			/* carved from the cache */
	BLOCKCACHE_NOT_TABLE,		/* strategy 'sequence': ask the allocator */
	BLOCKCACHE_GAPLESS			/* strategy 'gapless': never cached */
} CacheGot;

extern bool blockcache_next(const char *name, Oid funcid, int64 *id);
extern CacheGot blockcache_reserve(const char *name, Oid funcid, int64 n, AllocResult *res);
extern int	blockcache_collect(Oid dbid, uint64 token, AllocWork *works, int max);
extern int	blockcache_drop_stale(AllocWork *works, int nworks);
extern void blockcache_stage(const AllocWork *works, int nworks);
extern void blockcache_deliver(const AllocWork *work);
extern bool blockcache_has_requests(Oid dbid);

#endif							/* UIDGEN_BLOCKCACHE_H */
