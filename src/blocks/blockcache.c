/*-------------------------------------------------------------------------
 *
 * blockcache.c
 *	  The shared cache behind seq_next() and seq_reserve_block(): one entry
 *	  per (database, sequence) holding the range IDs are carved from and a
 *	  spare range fetched ahead (block prefetch).
 *
 * All backends share an entry, so a range is used up by everyone before
 * the next one is needed.  seq_next() carves one ID, seq_reserve_block() of
 * a sequence of strategy 'table' n IDs (or the block size), increment
 * apart, in shared memory under the entry's mutex: no wake-up, no WAL, no
 * commit.  The ranges of an entry have the step of the row they came from;
 * a change of the row frees the entry (invalidation, below).  Those of a
 * sequence numbered per period are of one period (their numbers carry its
 * key, allocsql.c), whose bounds the allocator sends with them: a carve at
 * a moment outside them drops what the entry holds (a gap) and waits for
 * a refill, which the allocator takes in the period of the time then (or
 * refuses, 22008, if the clock is behind the row's period).  So a number
 * is never handed out after its period has ended.
 * A sequence of strategy 'sequence' is served by the allocator as before
 * (whole blocks, one nextval() each): seq_reserve_block() asks it directly,
 * and only seq_next() uses its entry.
 *
 * Refill (Leaf's two segments): once 1/PREFETCH_TRIGGER (10%) of the last
 * range delivered is carved (counted in IDs, so in either direction), the
 * backend that notices asks the allocator (blocks/allocslots.c) for the
 * next range and returns without waiting.
 * The allocator commits the range (a committed UPDATE of next_block_start,
 * synchronous_commit on, so also on synchronous standbys) before it stores
 * it here; a range that continues the current one is appended to it,
 * another is kept as the spare.  A caller waits, on the entry's condition
 * variable, only when what the entry holds is too short for its request;
 * it then asks for at least its n.  The size of a refill follows demand:
 * twice the last range if that lasted under PREFETCH_FAST_MS (from one
 * refill request to the next), half if over PREFETCH_SLOW_MS, never above
 * PREFETCH_MAX_IDS nor half of uidgen.promotion_skip (so that the skip
 * after a failover still covers a refill an asynchronous standby missed),
 * and never below the block size or the request waiting for it.  A refill
 * takes what is left below max_value if that is less (allocsql.c), so a
 * request that fits below max_value is served, also from what the entry
 * holds after a refill found no room; one that does not gets 2200H, and
 * the entry then carves nothing more (exhausted is sticky).
 *
 * What is durable before what: the range is committed (allocworker.c's
 * table) before it is stored here; carving is in memory only.  A crash or
 * an entry freed loses what the entry held: gaps, never repeats.  The
 * row's next_block_start is the end of what was committed, the carving
 * position is seq_prefetched()'s next_id (id_sequences_prefetch).
 *
 * Invalidation: a change of the row (the trigger on id_sequences), a drop
 * of the extension or database frees the entry (cachetable.c) and bumps
 * its incarnation, so that a refill under way for the old row is thrown
 * away.  seq_alter() and seq_advance() first call seq_unprefetch() with the
 * row locked FOR UPDATE (which keeps the allocator off it): the entry is
 * freed under its mutex and the row moved back to the first ID not carved,
 * if the entry held the IDs up to next_block_start.  An entry unused for
 * uidgen.allocator_idle_timeout is freed by its database's allocator
 * (cachetable_release_idle()), which stays until none of its database's
 * entries holds a range.
 *
 * Which entry holds which sequence, and which entry a new sequence takes,
 * is blocks/cachetable.c's.
 *
 * Locking: the table's lock (UIDGEN_LOCK_BLOCK_CACHE), exclusively, and
 * the entry's mutex are both held to change which sequence an entry is for
 * (dbid, name), so either is enough to read it.  The mutex protects
 * everything else in the entry: this module takes it alone.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"
#include "utils/timestamp.h"

#include "blocks/allocslots.h"
#include "blocks/blockcache.h"
#include "blocks/cachetable.h"
#include "blocks/outcome.h"
#include "core/compat.h"
#include "core/settings.h"

#define CACHE_CHECK_MS 1000
/* The largest range a refill asks for, whatever the rate (and skip / 2). */
#define PREFETCH_MAX_IDS (INT64CONST(1) << 22)
/* Ranges used up faster than this double, slower than PREFETCH_SLOW_MS halve. */
#define PREFETCH_FAST_MS 1000
#define PREFETCH_SLOW_MS 10000
/* The next range is asked for once 1/PREFETCH_TRIGGER of the last is used. */
#define PREFETCH_TRIGGER 10

/* Wait event of a backend waiting for a refill (compat.h). */
static uint32 we_refill = 0;

/*
 * Size the next refill by the time the last range lasted (from one refill
 * request to the next), never above PREFETCH_MAX_IDS nor half of
 * uidgen.promotion_skip.  Mutex held.
 */
static void
cache_adapt(CacheEntry *e)
{
	TimestampTz now = GetCurrentTimestamp();
	int64		cap = Min(PREFETCH_MAX_IDS, (int64) uidgen_promotion_skip / 2);
	long		lasted = TimestampDifferenceMilliseconds(e->range_at, now);
	int64		step = e->range_count;

	if (lasted < PREFETCH_FAST_MS)
		step = step * 2;
	else if (lasted > PREFETCH_SLOW_MS)
		step = step / 2;
	e->step = Min(step, cap);
	e->range_at = now;
}

/*
 * Carve n IDs (0: the block size) from the entry, moving to the spare range
 * if the current one is too short (its rest is a gap).  Sets first, last,
 * requested and increment of *res, and *kick when the next range should be
 * fetched now.  Mutex held.
 */
static bool
cache_take(CacheEntry *e, int64 n, AllocResult *res, bool *kick)
{
	int64		need = n > 0 ? n : e->block_size;

	if (e->period != 0)
	{
		TimestampTz now = GetCurrentTimestamp();

		/* another period by the clock: nothing held may be handed out */
		if (now < e->period_start || now >= e->period_end)
		{
			e->cur_left = 0;
			e->spare_count = 0;
			e->exhausted = false;
			e->period = 0;
			return false;
		}
	}
	if (e->cur_left < need && e->spare_count > 0)
	{
		e->cur_next = e->spare_first;
		e->cur_left = e->spare_count;
		e->refill_left = e->spare_count - e->spare_count / PREFETCH_TRIGGER;
		e->spare_count = 0;
	}
	if (need == 0 || e->cur_left < need || e->exhausted)
		return false;
	res->first = e->cur_next;
	res->requested = need;
	res->increment = e->increment;
	res->last = e->cur_next + (need - 1) * e->increment;
	e->cur_left -= need;
	/* (a bigint: seq_room() leaves |increment| values after the last ID) */
	e->cur_next = res->last + e->increment;
	e->carves++;
	e->last_used = GetCurrentStatementStartTimestamp();
	*kick = e->spare_count == 0 && e->refill == REFILL_IDLE && e->cur_left < e->refill_left;
	if (*kick)
	{
		e->refill = REFILL_REQUESTED;
		cache_adapt(e);
	}
	return true;
}

/* Put an orphaned refill back for the next allocator; true if it was one. */
static bool
cache_recover(CacheEntry *e, const char *name)
{
	uint64		token;
	bool		orphan = false;

	SpinLockAcquire(&e->mutex);
	token = e->refill == REFILL_TAKEN ? e->taken_by : 0;
	SpinLockRelease(&e->mutex);
	if (token == 0 || allocator_token_alive(token))
		return false;
	SpinLockAcquire(&e->mutex);
	if (cachetable_is(e, name) && e->refill == REFILL_TAKEN && e->taken_by == token)
	{
		e->refill = REFILL_REQUESTED;
		orphan = true;
	}
	SpinLockRelease(&e->mutex);
	return orphan;
}

/* Raise the timeout error of seq_next(). */
static void
cache_timeout(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
			 errmsg("timed out waiting for the uidgen allocator to reserve IDs from block sequence \"%s\"",
					name),
			 errdetail("No block came within uidgen.block_timeout (%d ms).",
					   uidgen_block_timeout),
			 errhint("Look for \"uidgen allocator\" in the server log and in pg_stat_activity, and for sessions holding a lock on table id_sequences.")));
}

/*
 * Wait until the entry has n IDs for us (see cache_take); the mutex is not
 * held.  For seq_reserve_block() (reserve), CACHE_NOT_TABLE if the
 * sequence turns out to be of strategy 'sequence';
 * BLOCKCACHE_GAPLESS if it is (now) of strategy 'gapless'.
 */
static CacheGot
cache_wait(int *index, const char *name, Oid funcid, int64 n, bool reserve,
		   AllocResult *res)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													   uidgen_block_timeout);
	bool		started = false;
	uint32		failures_seen = 0;

	for (;;)
	{
		CacheEntry *e = cachetable_entry(*index);
		bool		kick = false;
		AllocResult failure;
		long		left;

		SpinLockAcquire(&e->mutex);
		if (!cachetable_is(e, name))
		{
			SpinLockRelease(&e->mutex);
			*index = cachetable_find(name, funcid);
			if (*index == CACHE_GAPLESS)
			{
				ConditionVariableCancelSleep();
				return BLOCKCACHE_GAPLESS;
			}
			started = false;	/* failures are counted per entry */
			continue;
		}
		if (reserve && !e->is_table)
		{
			SpinLockRelease(&e->mutex);
			ConditionVariableCancelSleep();
			return BLOCKCACHE_NOT_TABLE;
		}
		if (cache_take(e, n, res, &kick))
		{
			SpinLockRelease(&e->mutex);
			ConditionVariableCancelSleep();
			if (kick)
				(void) allocator_wake(MyDatabaseId, false);
			return BLOCKCACHE_SERVED;
		}
		if (started && e->failures != failures_seen)
		{
			failure = e->failure;
			/* the caller's request, not the refill's */
			failure.requested = n > 0 ? n : failure.requested;
			failures_seen = e->failures;
			/* refused: sticky from now on, as in the row */
			if (failure.outcome == ALLOC_EXHAUSTED)
				e->exhausted = true;
			SpinLockRelease(&e->mutex);
			ConditionVariableCancelSleep();
			/* a sequence gone meanwhile keeps no entry */
			if (failure.outcome == ALLOC_UNKNOWN)
				cachetable_forget(*index, name);
			if (failure.outcome != ALLOC_LOCKED)
				outcome_raise(name, &failure);
			/* lock waits do not count in uidgen.block_timeout */
			deadline += outcome_wait(name, &failure);
			continue;
		}
		if (!started)
		{
			failures_seen = e->failures;
			started = true;
		}
		/* (one ID: any refill will do, the block size by default) */
		e->want = Max(e->want, n > 1 ? n : 0);
		if (e->refill == REFILL_IDLE)
		{
			e->refill = REFILL_REQUESTED;
			kick = true;
		}
		SpinLockRelease(&e->mutex);

		if (kick || cache_recover(e, name))
			(void) allocator_wake(MyDatabaseId, true);
		left = (long) ((deadline - GetCurrentTimestamp()) / 1000);
		if (left <= 0)
			cache_timeout(name);
		(void) ConditionVariableTimedSleep(&e->cv, Min(left, CACHE_CHECK_MS),
										   uidgen_wait_event(&we_refill, "UidgenBlockRefill"));
		/* a live allocator may have been asked before and died since */
		(void) allocator_wake(MyDatabaseId, true);
	}
}

/*
 * n IDs (0: the block size) of a sequence from the shared cache, into *res
 * (see cache_take).  For seq_reserve_block() (reserve), BLOCKCACHE_NOT_TABLE
 * if the sequence is of strategy 'sequence', whose blocks the caller asks
 * the allocator for; BLOCKCACHE_GAPLESS if it is of strategy 'gapless',
 * which the cache never serves.
 */
static CacheGot
cache_get(const char *name, Oid funcid, int64 n, bool reserve,
		  AllocResult *res)
{
	int			index;
	CacheEntry *e;
	bool		kick;

	if (strlen(name) >= NAMEDATALEN)
	{
		AllocResult unknown = {.outcome = ALLOC_UNKNOWN};

		outcome_raise(name, &unknown);
	}
	index = cachetable_lookup(name, funcid);
	if (index == CACHE_GAPLESS)
		return BLOCKCACHE_GAPLESS;
	e = cachetable_entry(index);
	SpinLockAcquire(&e->mutex);
	if (cachetable_is(e, name) && (e->is_table || !reserve) &&
		cache_take(e, n, res, &kick))
	{
		SpinLockRelease(&e->mutex);
		if (kick)
			(void) allocator_wake(MyDatabaseId, false);
		return BLOCKCACHE_SERVED;
	}
	SpinLockRelease(&e->mutex);
	return cache_wait(&index, name, funcid, n, reserve, res);
}

/*
 * seq_next(): one ID of a sequence, from the shared cache, into *id; false
 * if the sequence is of strategy 'gapless'.
 */
bool
blockcache_next(const char *name, Oid funcid, int64 *id)
{
	AllocResult res;

	if (cache_get(name, funcid, 1, false, &res) != BLOCKCACHE_SERVED)
		return false;
	*id = res.first;
	return true;
}

/*
 * seq_reserve_block() of a sequence of strategy 'table': n IDs (0: the
 * block size) carved from the shared cache into *res; otherwise what the
 * sequence is (BLOCKCACHE_NOT_TABLE, BLOCKCACHE_GAPLESS).
 */
CacheGot
blockcache_reserve(const char *name, Oid funcid, int64 n, AllocResult *res)
{
	CacheGot	got = cache_get(name, funcid, n, true, res);

	if (got == BLOCKCACHE_SERVED)
		res->outcome = ALLOC_OK;
	return got;
}

/* What the database's entries hold, for seq_prefetched(); how many. */
int
blockcache_report(Oid dbid, CacheReport *out, int max)
{
	int			n = 0;

	for (int i = 0; i < cachetable_size() && n < max; i++)
	{
		CacheEntry *e = cachetable_entry(i);
		CacheReport *r = &out[n];

		SpinLockAcquire(&e->mutex);
		if (e->dbid == dbid)
		{
			strlcpy(r->name, e->name, NAMEDATALEN);
			r->known = e->block_size > 0;
			r->next_id = e->cur_left == 0 && e->spare_count > 0 ?
				e->spare_first : e->cur_next;
			r->ahead = e->cur_left + e->spare_count;
			r->refill = Max(e->step, e->block_size);
			r->last_used = e->last_used;
			n++;
		}
		SpinLockRelease(&e->mutex);
	}
	return n;
}

/* Does any entry of the database wait for a refill?  (A hint, no lock.) */
bool
blockcache_has_requests(Oid dbid)
{
	for (int i = 0; i < cachetable_size(); i++)
	{
		volatile CacheEntry *e = cachetable_entry(i);

		if (e->dbid == dbid && e->refill == REFILL_REQUESTED)
			return true;
	}
	return false;
}

/* For the allocator: take the refills a database's entries ask for. */
int
blockcache_collect(Oid dbid, uint64 token, AllocWork *works, int max)
{
	int			n = 0;

	for (int i = 0; i < cachetable_size() && n < max; i++)
	{
		CacheEntry *e = cachetable_entry(i);
		AllocWork  *w = &works[n];

		if (e->dbid != dbid || e->refill != REFILL_REQUESTED)
			continue;
		SpinLockAcquire(&e->mutex);
		if (e->dbid == dbid && e->refill == REFILL_REQUESTED)
		{
			e->refill = REFILL_TAKEN;
			e->taken_by = token;
			e->refill_ticket = e->incarnation;
			memset(w, 0, sizeof(AllocWork));
			strlcpy(w->name, e->name, NAMEDATALEN);
			w->n = Max(Max(e->step, e->want), e->block_size);
			e->want = 0;
			w->for_cache = true;
			w->index = i;
			w->ticket = e->incarnation;
			n++;
		}
		SpinLockRelease(&e->mutex);
	}
	return n;
}

/*
 * For the allocator, in each attempt at a round, once its snapshot is
 * taken: leave out the refills whose entry changed since they were taken
 * (a seq_alter(), seq_advance() or other change of the row freed it), so
 * that no range is committed for nobody; returns how many works remain.
 * A change not seen here that UPDATEs the row has not committed before
 * the snapshot: the round's UPDATE of that row then finds it locked (SKIP
 * LOCKED) or fails to serialize, and the next attempt looks again.  One
 * that only locks the row (seq_advance() below the next unused ID) and
 * commits before the round's UPDATE is not caught: that refill's range is
 * committed for nobody (a gap, never a repeat; open).
 */
int
blockcache_drop_stale(AllocWork *works, int nworks)
{
	int			kept = 0;

	for (int i = 0; i < nworks; i++)
	{
		AllocWork  *w = &works[i];
		bool		stale = false;

		if (w->for_cache)
		{
			CacheEntry *e = cachetable_entry(w->index);

			SpinLockAcquire(&e->mutex);
			stale = e->incarnation != w->ticket || e->refill != REFILL_TAKEN ||
				e->refill_ticket != w->ticket;
			SpinLockRelease(&e->mutex);
		}
		if (!stale)
			works[kept++] = *w;
	}
	return kept;
}

/*
 * For the allocator, before it commits a round: note each refill's range
 * in its entry as in flight, unless the entry changed since it was taken,
 * so that seq_unprefetch() gives it back with the entry's other IDs if it
 * runs between the commit and blockcache_deliver().  A range noted whose
 * commit then fails never matches the row's next_block_start.
 */
void
blockcache_stage(const AllocWork *works, int nworks)
{
	for (int i = 0; i < nworks; i++)
	{
		const AllocWork *w = &works[i];
		CacheEntry *e;

		if (!w->for_cache || w->result.outcome != ALLOC_OK || !w->result.is_table)
			continue;
		e = cachetable_entry(w->index);
		SpinLockAcquire(&e->mutex);
		if (e->refill == REFILL_TAKEN && e->incarnation == w->ticket &&
			e->refill_ticket == w->ticket)
		{
			e->flight_first = w->result.first;
			e->flight_count = w->result.requested;
			e->flight_end = w->result.last + w->result.increment;
		}
		SpinLockRelease(&e->mutex);
	}
}

/* For the allocator: store a refill's outcome, unless it is stale. */
void
blockcache_deliver(const AllocWork *w)
{
	CacheEntry *e = cachetable_entry(w->index);
	const AllocResult *r = &w->result;

	SpinLockAcquire(&e->mutex);
	if (e->refill == REFILL_TAKEN && e->incarnation == w->ticket &&
		e->refill_ticket == w->ticket)
	{
		int64		count = r->requested;

		/*
		 * The ranges of one incarnation have one step: a change of the row
		 * (its trigger) starts a new incarnation, and no refill of that one
		 * is served before the change commits or aborts (the row is locked).
		 */
		/* a range of another period replaces what is held (a gap) */
		if (r->outcome == ALLOC_OK && r->period != e->period)
		{
			e->cur_left = 0;
			e->spare_count = 0;
			e->exhausted = false;
			e->period = r->period;
			e->period_start = r->period_start;
			e->period_end = r->period_end;
		}
		if (r->outcome == ALLOC_OK)
		{
			/* (of the same period: its bounds are as sure, and later) */
			e->period_start = r->period_start;
			e->period_end = r->period_end;
			e->is_table = r->is_table;
			e->block_size = r->block_size;
			e->increment = r->increment;
			e->range_count = count;
		}
		if (r->outcome == ALLOC_OK &&
			(e->cur_left == 0 || e->cur_next + e->cur_left * e->increment == r->first))
		{
			/* the current range, or its continuation: one range */
			if (e->cur_left == 0)
				e->cur_next = r->first;
			e->cur_left += count;
			e->refill_left = count - count / PREFETCH_TRIGGER;
		}
		else if (r->outcome == ALLOC_OK && e->spare_count == 0)
		{
			e->spare_first = r->first;
			e->spare_count = count;
		}
		else if (r->outcome != ALLOC_OK)
		{
			/*
			 * A refill that found no room leaves what is held to be carved:
			 * a request that fits is served.  Only a caller refused makes
			 * the entry exhausted (cache_wait), sticky as in the row.
			 */
			e->failures++;
			e->failure = *r;
		}
		e->refill = REFILL_IDLE;
		e->flight_count = 0;
	}
	SpinLockRelease(&e->mutex);
	ConditionVariableBroadcast(&e->cv);
}
