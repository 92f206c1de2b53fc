/*-------------------------------------------------------------------------
 *
 * blockcache.c
 *	  The shared cache behind seq_next(): one entry per (database, sequence)
 *	  holding the range IDs are served from and a spare range fetched ahead.
 *
 * All backends share an entry, so a block is used up by everyone before
 * the next one is needed.  When the current range is half used, the
 * backend that notices asks the allocator (allocator.c) for the next one
 * and returns without waiting; the allocator puts it in the entry as the
 * spare.  A caller waits, on the entry's condition variable, only when both
 * ranges are empty.  IDs cached and not used when the server stops are
 * lost: gaps, never repeats, as the ranges were committed when reserved.
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
 * away when it arrives.
 *
 * Locking: CacheShared.lock, exclusively, and the entry's mutex are both
 * held to change which sequence an entry is for (dbid, name), so either is
 * enough to read it.  The mutex protects everything else in the entry.
 * Backends remember where their sequences are in a small local table of
 * fixed size (a hint per hash bucket, the last one wins), and check the
 * identity under the mutex at every use.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/condition_variable.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "blocks/blockcache.h"
#include "core/compat.h"
#include "core/settings.h"
#include "core/shmem.h"
#include "blocks/outcome.h"
#include "blocks/seqrow.h"

#define CACHE_CHECK_MS 1000
/* Hints a backend keeps: a fixed number, whatever names it is given. */
#define CACHE_HINTS 64

typedef enum RefillState
{
	REFILL_IDLE,
	REFILL_REQUESTED,			/* waiting for the allocator to take it */
	REFILL_TAKEN				/* the allocator is working on it */
} RefillState;

typedef struct CacheEntry
{
	slock_t		mutex;
	Oid			dbid;			/* InvalidOid: unused */
	char		name[NAMEDATALEN];
	uint64		incarnation;	/* bumped when emptied or reassigned */
	TimestampTz last_used;
	int64		cur_next;		/* next ID of the current range */
	int64		cur_left;		/* IDs left in it */
	int64		refill_at;		/* ask for a spare once this ID is served */
	int64		spare_first;	/* the spare range */
	int64		spare_count;	/* 0: none */
	RefillState refill;
	uint64		refill_ticket;	/* incarnation the refill was taken for */
	uint64		taken_by;		/* allocator token */
	uint32		failures;		/* refills that failed, ever */
	AllocResult failure;		/* the last failed refill */
	ConditionVariable cv;		/* broadcast when the entry changes */
} CacheEntry;

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

/* Wait event of a backend waiting for a refill (compat.h). */
static uint32 we_refill = 0;

/* Size of the cache. */
static Size
blockcache_shmem_size(void)
{
	return add_size(offsetof(CacheShared, entries),
					mul_size(uidgen_block_cache_entries, sizeof(CacheEntry)));
}

/* Set up the cache (postmaster). */
static void
blockcache_shmem_init(void *mem)
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

static const UidgenShmemArea blockcache_area = {
	"uidgen block cache", blockcache_shmem_size, blockcache_shmem_init, (void **) &cache_shared
};

/* Register the cache's shared memory (from _PG_init, when preloaded). */
void
blockcache_register(void)
{
	shmem_register(&blockcache_area);
}

/* Is the entry the one of this sequence of this database?  Mutex held. */
static inline bool
cache_is(CacheEntry *e, const char *name)
{
	return e->dbid == MyDatabaseId && strcmp(e->name, name) == 0;
}

/* The entry of a sequence, or -1.  Lock held. */
static int
cache_scan(const char *name)
{
	for (int i = 0; i < cache_shared->nentries; i++)
		if (cache_is(&cache_shared->entries[i], name))
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

/* Empty an entry and make it free.  Lock held exclusively. */
static void
cache_release(CacheEntry *e)
{
	SpinLockAcquire(&e->mutex);
	e->dbid = InvalidOid;
	e->name[0] = '\0';
	e->incarnation++;
	e->cur_left = 0;
	e->spare_count = 0;
	e->refill = REFILL_IDLE;
	SpinLockRelease(&e->mutex);
	ConditionVariableBroadcast(&e->cv);
}

/* Free the entry of a sequence the allocator found gone. */
static void
cache_forget(int index, const char *name)
{
	CacheEntry *e = &cache_shared->entries[index];

	LWLockAcquire(cache_shared->lock, LW_EXCLUSIVE);
	if (cache_is(e, name))
		cache_release(e);
	LWLockRelease(cache_shared->lock);
}

/* Give a sequence an entry: a free one, or a victim.  Lock held exclusively. */
static int
cache_assign(const char *name)
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
 * function (seqrow.c finds id_sequences next to it).
 */
static int
cache_find(const char *name, Oid funcid)
{
	int			index;
	CacheHint  *hint;

	LWLockAcquire(cache_shared->lock, LW_SHARED);
	index = cache_scan(name);
	LWLockRelease(cache_shared->lock);
	if (index < 0)
	{
		seqrow_require(funcid, name);
		LWLockAcquire(cache_shared->lock, LW_EXCLUSIVE);
		index = cache_scan(name);
		if (index < 0)
			index = cache_assign(name);
		LWLockRelease(cache_shared->lock);
	}
	hint = cache_hint(name);
	strlcpy(hint->name, name, NAMEDATALEN);
	hint->index = index;
	return index;
}

/* Where the sequence's entry probably is (checked by the caller). */
static int
cache_lookup(const char *name, Oid funcid)
{
	CacheHint  *hint = cache_hint(name);

	if (strcmp(hint->name, name) == 0)
		return hint->index;
	return cache_find(name, funcid);
}

/*
 * Serve one ID from the entry, moving to the spare range if needed.  Sets
 * *kick when the spare should be fetched now.  Mutex held.
 */
static bool
cache_take(CacheEntry *e, int64 *id, bool *kick)
{
	if (e->cur_left == 0 && e->spare_count > 0)
	{
		e->cur_next = e->spare_first;
		e->cur_left = e->spare_count;
		e->refill_at = e->spare_first + e->spare_count / 2;
		e->spare_count = 0;
	}
	if (e->cur_left == 0)
		return false;
	*id = e->cur_next++;
	e->cur_left--;
	e->last_used = GetCurrentStatementStartTimestamp();
	*kick = e->spare_count == 0 && e->refill == REFILL_IDLE && *id >= e->refill_at;
	if (*kick)
		e->refill = REFILL_REQUESTED;
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
	if (cache_is(e, name) && e->refill == REFILL_TAKEN && e->taken_by == token)
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

/* Wait until the entry has an ID for us; the mutex is not held. */
static void
cache_wait(int *index, const char *name, Oid funcid, int64 *id)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													   uidgen_block_timeout);
	bool		started = false;
	uint32		failures_seen = 0;

	for (;;)
	{
		CacheEntry *e = &cache_shared->entries[*index];
		bool		kick = false;
		AllocResult failure;
		long		left;

		SpinLockAcquire(&e->mutex);
		if (!cache_is(e, name))
		{
			SpinLockRelease(&e->mutex);
			*index = cache_find(name, funcid);
			started = false;	/* failures are counted per entry */
			continue;
		}
		if (cache_take(e, id, &kick))
		{
			SpinLockRelease(&e->mutex);
			ConditionVariableCancelSleep();
			if (kick)
				(void) allocator_wake(MyDatabaseId, false);
			return;
		}
		if (started && e->failures != failures_seen)
		{
			failure = e->failure;
			failures_seen = e->failures;
			SpinLockRelease(&e->mutex);
			ConditionVariableCancelSleep();
			/* a sequence gone meanwhile keeps no entry */
			if (failure.outcome == ALLOC_UNKNOWN)
				cache_forget(*index, name);
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

/* seq_next(): one ID of a sequence, from the shared cache (see cache_find). */
int64
blockcache_next(const char *name, Oid funcid)
{
	int			index;
	CacheEntry *e;
	int64		id;
	bool		kick;

	if (strlen(name) >= NAMEDATALEN)
	{
		AllocResult unknown = {.outcome = ALLOC_UNKNOWN};

		outcome_raise(name, &unknown);
	}
	index = cache_lookup(name, funcid);
	e = &cache_shared->entries[index];
	SpinLockAcquire(&e->mutex);
	if (cache_is(e, name) && cache_take(e, &id, &kick))
	{
		SpinLockRelease(&e->mutex);
		if (kick)
			(void) allocator_wake(MyDatabaseId, false);
		return id;
	}
	SpinLockRelease(&e->mutex);
	cache_wait(&index, name, funcid, &id);
	return id;
}

/* Free the entries of a sequence (or of all of a database's: name NULL). */
void
blockcache_invalidate(Oid dbid, const char *name)
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

/* Does any entry of the database wait for a refill?  (A hint, no lock.) */
bool
blockcache_has_requests(Oid dbid)
{
	for (int i = 0; i < cache_shared->nentries; i++)
	{
		volatile CacheEntry *e = &cache_shared->entries[i];

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

	for (int i = 0; i < cache_shared->nentries && n < max; i++)
	{
		CacheEntry *e = &cache_shared->entries[i];
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
			w->for_cache = true;
			w->index = i;
			w->ticket = e->incarnation;
			n++;
		}
		SpinLockRelease(&e->mutex);
	}
	return n;
}

/* For the allocator: store a refill's outcome, unless it is stale. */
void
blockcache_deliver(const AllocWork *w)
{
	CacheEntry *e = &cache_shared->entries[w->index];
	const AllocResult *r = &w->result;

	SpinLockAcquire(&e->mutex);
	if (e->refill == REFILL_TAKEN && e->incarnation == w->ticket &&
		e->refill_ticket == w->ticket)
	{
		if (r->outcome == ALLOC_OK && e->cur_left == 0 && e->spare_count == 0)
		{
			e->cur_next = r->first;
			e->cur_left = r->last - r->first + 1;
			e->refill_at = r->first + e->cur_left / 2;
		}
		else if (r->outcome == ALLOC_OK && e->spare_count == 0)
		{
			e->spare_first = r->first;
			e->spare_count = r->last - r->first + 1;
		}
		else if (r->outcome != ALLOC_OK)
		{
			e->failures++;
			e->failure = *r;
		}
		e->refill = REFILL_IDLE;
	}
	SpinLockRelease(&e->mutex);
	ConditionVariableBroadcast(&e->cv);
}

/* For an exiting allocator: wake the database's waiters to recover. */
void
blockcache_wake_database(Oid dbid)
{
	if (cache_shared == NULL)
		return;
	for (int i = 0; i < cache_shared->nentries; i++)
		if (cache_shared->entries[i].dbid == dbid)
			ConditionVariableBroadcast(&cache_shared->entries[i].cv);
}
