/*-------------------------------------------------------------------------
 *
 * cachetable.c
 *	  The table of the seq_next() cache: which entry holds which (database,
 *	  sequence), which entry a new sequence takes, and the entries freed
 *	  when a sequence, the extension or a database goes.  What an entry
 *	  holds, and how it is served and refilled, is blocks/blockcache.c's.
 *
 * The table has uidgen.block_cache_entries entries, shared by all
 * databases.  A sequence without an entry gets one only once its caller
 * has seen its row in id_sequences (seqrow.c), so names that do not exist
 * take none; an entry whose sequence the allocator then finds gone is
 * freed, not kept.  A sequence takes a free entry, or else evicts the least
 * recently used one, within limits: a database that holds its fair share
 * (entries / databases holding entries, itself included) evicts only among
 * its own entries, and one below it only among the databases above theirs.
 * So no database can push another below its fair share.  Changing or
 * dropping a sequence's row (the trigger on id_sequences), dropping the
 * extension or the database frees its entries and bumps their
 * incarnation, so that a refill still under way for the old row is thrown
 * away when it arrives.  The allocator frees the entries nobody used for
 * uidgen.allocator_idle_timeout, and seq_unprefetch() the entry of a
 * sequence seq_alter() or seq_advance() is changing.  Shared memory: one
 * CacheEntry (488 bytes on 64-bit platforms) per entry,
 * uidgen.block_cache_entries of them, whatever the ranges hold.
 *
 * Locking: the table's lock (CacheShared.lock, UIDGEN_LOCK_BLOCK_CACHE),
 * exclusively, and the entry's mutex are both held to change which sequence
 * an entry is for (dbid, name), so either is enough to read it.  The mutex
 * protects everything else in the entry.  Backends remember where their
 * sequences are in a small local table of fixed size (a hint per hash
 * bucket, the last one wins), and check the identity under the mutex at
 * every use.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "blocks/cachetable.h"
#include "blocks/seqrow.h"
#include "core/settings.h"
#include "core/shmem.h"

/* Hints a backend keeps: a fixed number, whatever names it is given. */
#define CACHE_HINTS 64

typedef struct CacheShared
{
	LWLock	   *lock;
	int			nentries;
	CacheEntry	entries[FLEXIBLE_ARRAY_MEMBER];
} CacheShared;

/* Backend-local: where a sequence of this database was last seen. */
typedef struct CacheHint
{
	char		name[NAMEDATALEN];	/* "": none */
	int			index;
} CacheHint;

static CacheShared *cache_shared = NULL;
static CacheHint cache_hints[CACHE_HINTS];

/* Set up the cache (postmaster). */
static void
cachetable_shmem_init(void *mem)
{
	CacheShared *c = mem;

	c->lock = shmem_lock(UIDGEN_LOCK_BLOCK_CACHE);
	c->nentries = uidgen_block_cache_entries;
	for (int i = 0; i < c->nentries; i++)
	{
		SpinLockInit(&c->entries[i].mutex);
		ConditionVariableInit(&c->entries[i].cv);
	}
}

/* Register the cache's shared memory (from _PG_init, when preloaded). */
void
cachetable_register(void)
{
	shmem_register("uidgen block cache",
				   add_size(offsetof(CacheShared, entries),
							mul_size(uidgen_block_cache_entries, sizeof(CacheEntry))),
				   0, cachetable_shmem_init, (void **) &cache_shared);
}

/* The entry at "index". */
CacheEntry *
cachetable_entry(int index)
{
	return &cache_shared->entries[index];
}

/* How many entries the table has (none if uidgen is not preloaded). */
int
cachetable_size(void)
{
	return cache_shared != NULL ? cache_shared->nentries : 0;
}

/* The entry of a sequence, or -1.  Lock held. */
static int
cache_scan(const char *name)
{
	for (int i = 0; i < cache_shared->nentries; i++)
		if (cachetable_is(&cache_shared->entries[i], name))
			return i;
	return -1;
}

/* qsort comparator for database OIDs. */
static int
cache_oid_cmp(const void *a, const void *b)
{
	Oid			x = *(const Oid *) a;
	Oid			y = *(const Oid *) b;

	return (x > y) - (x < y);
}

/* How many elements of a sorted array are dbid. */
static int
cache_count_in(const Oid *sorted, int n, Oid dbid)
{
	int			lo = 0;
	int			hi = n;
	int			first;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (sorted[mid] < dbid)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	hi = n;
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (sorted[mid] <= dbid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - first;
}

/*
 * The entry to reuse in a full cache: the least recently used among this
 * database's own once it holds its fair share, else among the databases
 * above theirs (or any, when the cache is too small to share).  Lock held
 * exclusively.
 */
static int
cache_victim(void)
{
	int			n = cache_shared->nentries;
	Oid		   *dbs = palloc(sizeof(Oid) * n);
	int			ndbs = 0;
	int			mine;
	int			fair;
	int			victim = -1;
	int			fallback = -1;

	for (int i = 0; i < n; i++)
		dbs[i] = cache_shared->entries[i].dbid;
	qsort(dbs, n, sizeof(Oid), cache_oid_cmp);
	for (int i = 0; i < n; i++)
		if (i == 0 || dbs[i] != dbs[i - 1])
			ndbs++;
	mine = cache_count_in(dbs, n, MyDatabaseId);
	fair = Max(n / (ndbs + (mine == 0 ? 1 : 0)), 1);

	for (int i = 0; i < n; i++)
	{
		CacheEntry *e = &cache_shared->entries[i];
		bool		allowed;

		if (fallback < 0 || e->last_used < cache_shared->entries[fallback].last_used)
			fallback = i;
		if (mine >= fair)
			allowed = e->dbid == MyDatabaseId;
		else
			allowed = cache_count_in(dbs, n, e->dbid) > fair;
		if (allowed && (victim < 0 || e->last_used < cache_shared->entries[victim].last_used))
			victim = i;
	}
	pfree(dbs);
	return victim >= 0 ? victim : fallback;
}

/* Empty an entry and make it free.  Lock held exclusively, and the mutex. */
static void
cache_release_locked(CacheEntry *e)
{
	e->dbid = InvalidOid;
	e->name[0] = '\0';
	e->incarnation++;
	e->cur_left = 0;
	e->spare_count = 0;
	e->period = 0;
	e->flight_count = 0;
	e->refill = REFILL_IDLE;
}

/* Empty an entry and make it free.  Lock held exclusively. */
static void
cache_release(CacheEntry *e)
{
	SpinLockAcquire(&e->mutex);
	cache_release_locked(e);
	SpinLockRelease(&e->mutex);
	ConditionVariableBroadcast(&e->cv);
}

/* Free the entry of a sequence the allocator found gone. */
void
cachetable_forget(int index, const char *name)
{
	CacheEntry *e = &cache_shared->entries[index];

	LWLockAcquire(cache_shared->lock, LW_EXCLUSIVE);
	if (cachetable_is(e, name))
		cache_release(e);
	LWLockRelease(cache_shared->lock);
}

/* Give a sequence an entry: a free one, or a victim.  Lock held exclusively. */
static int
cache_assign(const char *name, bool is_table)
{
	int			victim = -1;
	CacheEntry *e;

	for (int i = 0; i < cache_shared->nentries && victim < 0; i++)
		if (!OidIsValid(cache_shared->entries[i].dbid))
			victim = i;
	if (victim < 0)
		victim = cache_victim();

	e = &cache_shared->entries[victim];
	SpinLockAcquire(&e->mutex);
	e->dbid = MyDatabaseId;
	strlcpy(e->name, name, NAMEDATALEN);
	e->incarnation++;
	e->last_used = GetCurrentStatementStartTimestamp();
	e->cur_left = 0;
	e->spare_count = 0;
	e->period = 0;
	e->is_table = is_table;
	e->block_size = 0;
	e->exhausted = false;
	e->want = 0;
	e->step = 0;
	e->range_count = 0;
	e->range_at = 0;
	e->carves_swept = e->carves;
	e->swept_used = 0;
	e->flight_count = 0;
	e->refill = REFILL_IDLE;
	SpinLockRelease(&e->mutex);
	ConditionVariableBroadcast(&e->cv);
	return victim;
}

/* The hint slot of a name. */
static inline CacheHint *
cache_hint(const char *name)
{
	return &cache_hints[hash_bytes((const unsigned char *) name, strlen(name)) % CACHE_HINTS];
}

/*
 * Find the entry of a sequence, or assign one once the sequence is seen to
 * exist (else 42704), and remember where it is.  funcid: the calling
 * function (seqrow.c finds id_sequences next to it).  A sequence of
 * strategy 'gapless' never takes an entry: CACHE_GAPLESS.
 */
int
cachetable_find(const char *name, Oid funcid)
{
	int			index;
	CacheHint  *hint;

	LWLockAcquire(cache_shared->lock, LW_SHARED);
	index = cache_scan(name);
	LWLockRelease(cache_shared->lock);
	if (index < 0)
	{
		SeqStrategy kind = seqrow_require(funcid, name);

		if (kind == SEQ_GAPLESS)
			return CACHE_GAPLESS;
		LWLockAcquire(cache_shared->lock, LW_EXCLUSIVE);
		index = cache_scan(name);
		if (index < 0)
			index = cache_assign(name, kind == SEQ_TABLE);
		LWLockRelease(cache_shared->lock);
	}
	hint = cache_hint(name);
	strlcpy(hint->name, name, NAMEDATALEN);
	hint->index = index;
	return index;
}

/* Where the sequence's entry probably is (checked by the caller), or CACHE_GAPLESS. */
int
cachetable_lookup(const char *name, Oid funcid)
{
	CacheHint  *hint = cache_hint(name);

	if (strcmp(hint->name, name) == 0)
		return hint->index;
	return cachetable_find(name, funcid);
}

/* Free the entries of a sequence (or of all of a database's: name NULL). */
void
cachetable_invalidate(Oid dbid, const char *name)
{
	if (cache_shared == NULL)
		return;
	LWLockAcquire(cache_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < cache_shared->nentries; i++)
	{
		CacheEntry *e = &cache_shared->entries[i];

		if (e->dbid == dbid && (name == NULL || strcmp(e->name, name) == 0))
			cache_release(e);
	}
	LWLockRelease(cache_shared->lock);
}

/*
 * For the allocator, about once a second: free the database's entries
 * nobody carved from for timeout_s seconds and no refill is under way for
 * (their ranges become gaps).  A carve stamps the entry with its
 * statement's start, which a long statement keeps for its whole run: an
 * entry carved from since the last sweep is stamped now instead, so that
 * an entry in use is never freed as idle.  Returns whether an entry of the
 * database still holds IDs.
 */
bool
cachetable_release_idle(Oid dbid, int timeout_s)
{
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz cutoff = TimestampTzPlusMilliseconds(now, -1000L * timeout_s);
	bool		held = false;

	if (timeout_s <= 0)
		return false;
	LWLockAcquire(cache_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < cache_shared->nentries; i++)
	{
		CacheEntry *e = &cache_shared->entries[i];
		bool		idle;
		bool		holds;

		if (e->dbid != dbid)
			continue;
		SpinLockAcquire(&e->mutex);
		/* carved from since the last sweep: in use (a long statement) */
		if (e->carves != e->carves_swept)
		{
			e->carves_swept = e->carves;
			e->swept_used = now;
		}
		idle = e->refill == REFILL_IDLE &&
			Max(e->last_used, e->swept_used) < cutoff;
		holds = e->cur_left > 0 || e->spare_count > 0;
		if (idle)
			cache_release_locked(e);
		SpinLockRelease(&e->mutex);
		if (idle)
			ConditionVariableBroadcast(&e->cv);
		else
			held |= holds;
	}
	LWLockRelease(cache_shared->lock);
	return held;
}

/*
 * For seq_alter() and seq_advance() (seq_unprefetch()), whose transaction
 * holds the sequence's row FOR UPDATE, so that no refill moves it: free the
 * entry of a sequence of this database (of either strategy: seq_advance()
 * of strategy 'sequence' must not leave seq_next() a block below "past")
 * and, for strategy 'table', return where its row may move back to, the
 * first ID not carved, when what the entry holds ends at the row's
 * next_block_start (end); else end.  What it holds is, from the end down,
 * the refill in flight (committed by the allocator, whose row lock the
 * caller waited for, and not stored yet), the spare range and the current
 * one: each gives its IDs back if it ends where the one above starts.  A
 * sequence numbered per period gives nothing back: its numbers carry the
 * period's key, the row counts within the period (a gap).
 * Carving and the freeing are under the one mutex: nothing is carved past
 * the ID returned.
 */
int64
cachetable_unprefetch(const char *name, int64 end)
{
	int64		back = end;
	int			index;

	/* not preloaded: nothing was prefetched (the SQL functions still work) */
	if (cache_shared == NULL)
		return end;
	LWLockAcquire(cache_shared->lock, LW_EXCLUSIVE);
	index = cache_scan(name);
	if (index >= 0)
	{
		CacheEntry *e = &cache_shared->entries[index];

		SpinLockAcquire(&e->mutex);
		if (e->is_table && e->period == 0)
		{
			if (e->refill == REFILL_TAKEN && e->flight_count > 0 &&
				e->flight_end == back)
				back = e->flight_first;
			if (e->spare_count > 0 &&
				e->spare_first + e->spare_count * e->increment == back)
				back = e->spare_first;
			if (e->cur_left > 0 && e->cur_next + e->cur_left * e->increment == back)
				back = e->cur_next;
		}
		cache_release_locked(e);
		SpinLockRelease(&e->mutex);
		ConditionVariableBroadcast(&e->cv);
	}
	LWLockRelease(cache_shared->lock);
	return back;
}

/* For an exiting allocator: wake the database's waiters to recover. */
void
cachetable_wake_database(Oid dbid)
{
	if (cache_shared == NULL)
		return;
	for (int i = 0; i < cache_shared->nentries; i++)
		if (cache_shared->entries[i].dbid == dbid)
			ConditionVariableBroadcast(&cache_shared->entries[i].cv);
}
