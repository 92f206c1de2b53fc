/*-------------------------------------------------------------------------
 *
 * citusblocks.c
 *	  One block sequence for a whole Citus cluster: on a Citus worker (a
 *	  database with the citus extension whose local group id is not 0)
 *	  every block sequence call acts on the coordinator's id_sequences.
 *
 * seq_reserve_block() on a worker asks the coordinator for the range (its
 * seq_reserve_block(), committed there before it answers).  seq_next() on
 * a worker is served from a block the worker reserved from the coordinator
 * the same way (hi-lo across nodes: the sequence's block_size IDs at a
 * time), kept in this module's shared memory for every backend of the
 * worker.  A block is first, first + increment, ..., last (below first
 * when the sequence descends): the coordinator answers the row's increment
 * in the statement that reserves the range; the worker keeps the next ID,
 * how many are left and the increment, and never computes a value past
 * the last (no overflow at the int64 edges).  seq_create(), seq_alter(),
 * seq_advance() and seq_drop() on a worker run on the coordinator
 * (seq_coordinator_call(), from their SQL); the coordinator's seq_alter(),
 * seq_advance() and seq_drop() then have every worker forget the blocks it
 * holds of that sequence (seq_forget(), through run_command_on_workers()),
 * and fail if a worker does not answer.
 *
 * The worker reaches the coordinator through replicas/citusconn.c
 * (libpq, bounded by uidgen.block_timeout).  With the coordinator
 * unreachable a worker serves what its shared memory holds, then fails
 * with SQLSTATE 08006, naming the coordinator.
 *
 * While id_sequences is in pg_dist_partition (distributed, or a reference
 * table), every block sequence call is refused on every node: its rows
 * would no longer be one list that the allocator reads.
 *
 * Leases: a block reserved for seq_next() is served only until the
 * worker's boot-time clock (CLOCK_BOOTTIME: a suspend counts, which the
 * monotonic clock does not), read before it asked, plus the lease the
 * coordinator answered (its uidgen.citus_block_lease); then the rest is
 * thrown away (a gap) and a new block reserved.  The coordinator records
 * the lease in the row before the range, and its changes of the row wait
 * until no lease can run (blocks/leasewait.c, with its clock assumptions):
 * so a worker that missed seq_forget() (disabled, removed: only active
 * workers are told) never serves a block past a change.
 *
 * What is durable before what: a worker holds nothing durable.
 *
 *	step				1. durable first				2. then in memory
 *	----				----------------				-----------------
 *	refill (worker)		start time taken; the lease		the block in this
 *						(worker_lease_until) committed	module's shared memory
 *						on the coordinator; the range	with its lease end,
 *						(for 'table' from the			then IDs carved from it
 *						coordinator's prefetch cache,	until the lease ends
 *						committed before the lease;		(the clock read under
 *						blocks/leasewait.c)				the entry's spinlock)
 *						"citus-refill-after-reserve"
 *	seq_reserve_block	the range committed on the		returned to the client
 *	(worker)			coordinator
 *
 * Death at each step: the worker dies before the lease or the range
 * commits: nothing was reserved, or a gap.  The coordinator dies before
 * the lease commits: the worker gets an error, serves nothing; between
 * lease and range: a lease with no block (a later change waits for
 * nothing); after the range, before the answer: a gap.  The worker dies
 * after: what its shared memory held is a gap.  A refill that comes back
 * after the sequence was forgotten (dropped, advanced) is thrown away: the
 * generation it started under has moved on; one that comes back after a
 * change that missed it arrives with its lease already over (the change
 * waited it out) and is thrown away too.  A backend that ends mid-refill
 * by ERROR or FATAL (pg_terminate_backend()) clears the entry's refilling
 * flag (PG_ENSURE_ERROR_CLEANUP, also run by proc_exit); a kill -9 makes
 * the postmaster reset shared memory, the entry with it.
 *
 * Locking: the block cache lock (UIDGEN_LOCK_BLOCK_CACHE), exclusively, and
 * the entry's mutex are both held to change which sequence an entry is for
 * (dbid, name); either is enough to read it.  The mutex protects the rest
 * of the entry.  One refill at a time per entry (refilling); the others
 * wait for it, up to uidgen.block_timeout.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/spin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "clock/clock.h"
#include "core/compat.h"
#include "core/crashpoint.h"
#include "core/settings.h"
#include "core/shmem.h"
#include "replicas/citusblocks.h"
#include "replicas/citusconn.h"

PG_FUNCTION_INFO_V1(seq_on_coordinator);
PG_FUNCTION_INFO_V1(seq_coordinator_call);
PG_FUNCTION_INFO_V1(seq_forget);

/* Sequences a worker holds blocks of, shared by all its databases. */
#define REMOTE_ENTRIES 64

typedef struct RemoteEntry
{
	Oid			dbid;			/* InvalidOid: free */
	char		name[NAMEDATALEN];
	slock_t		mutex;
	int64		next;			/* next ID to hand out */
	uint64		left;			/* IDs left in the block, next's included; 0: empty */
	int64		increment;		/* the block's step: next's successor is next + increment */
	uint64		expires;		/* boot-time ticks: the block's lease ends */
	bool		refilling;		/* a backend is reserving the next block */
	uint64		generation;		/* bumped by seq_forget() */
} RemoteEntry;

typedef struct RemoteShared
{
	RemoteEntry entries[REMOTE_ENTRIES];
} RemoteShared;

static RemoteShared *rs = NULL;

/* This backend's route, decided once per transaction. */
static bool route_known = false;
static bool route_remote = false;
static bool xact_callback_on = false;

/* Wait event of a backend waiting for another's refill (compat.h). */
static uint32 we_refill = 0;

/* Shared memory set-up, in the postmaster. */
static void
citusblocks_shmem_init(void *mem)
{
	for (int i = 0; i < REMOTE_ENTRIES; i++)
	{
		SpinLockInit(&rs->entries[i].mutex);
		rs->entries[i].next = 1;
		rs->entries[i].left = 0;
		rs->entries[i].increment = 1;
	}
}

/* Register this module's shared memory (from _PG_init, when preloaded). */
void
citusblocks_register(void)
{
	shmem_register("uidgen citus blocks", sizeof(RemoteShared), 0,
				   citusblocks_shmem_init, (void **) &rs);
}

/* uidgen's schema in this database, quoted (read once per backend). */
static char *
citusblocks_schema(void)
{
	static char *schema = NULL;

	if (schema == NULL)
	{
		SPI_connect();
		if (SPI_execute("SELECT extnamespace::pg_catalog.regnamespace::text "
						"FROM pg_catalog.pg_extension WHERE extname = 'uidgen'",
						true, 1) != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "could not find the schema of extension uidgen");
		schema = MemoryContextStrdup(TopMemoryContext,
									 SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1));
		SPI_finish();
	}
	return schema;
}

/*
 * Decide this transaction's route: remote on a Citus worker, local
 * elsewhere; refused on every node while id_sequences is distributed.
 */
static void
citusblocks_decide(void)
{
	char	   *sql;
	bool		no_group;
	bool		isnull;
	int32		group;
	bool		distributed;

	route_remote = false;
	if (!uidgen_citus_preloaded || !OidIsValid(get_extension_oid("citus", true)))
		return;
	sql = psprintf("SELECT (SELECT groupid FROM pg_catalog.pg_dist_local_group), "
				   "EXISTS (SELECT FROM pg_catalog.pg_dist_partition "
				   "WHERE logicalrelid = %s::pg_catalog.regclass)",
				   quote_literal_cstr(psprintf("%s.id_sequences", citusblocks_schema())));
	SPI_connect();
	if (SPI_execute(sql, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read this node's citus group");
	group = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &no_group));
	distributed = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	SPI_finish();
	if (distributed)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("block sequences are refused while id_sequences is distributed by citus"),
				 errdetail("Block sequences keep one list of ranges on the coordinator; a distributed or reference id_sequences would let nodes hand out the same IDs."),
				 errhint("undistribute_table() cannot undo it (the table belongs to the extension). On the coordinator, remove Citus's metadata of it: SELECT citus_drop_all_shards(t, n, 'id_sequences', true), master_remove_partition_metadata(t, n, 'id_sequences'), start_metadata_sync_to_all_nodes() FROM (SELECT '%s.id_sequences'::regclass AS t, '%s' AS n) x;",
						 citusblocks_schema(), citusblocks_schema())));
	route_remote = !no_group && group != 0;
}

/* End of a transaction: the route is decided again in the next one. */
static void
citusblocks_xact_end(XactEvent event, void *arg)
{
	route_known = false;
}

/*
 * Does this backend's database act on the coordinator's id_sequences (a
 * Citus worker)?  Decided once per transaction; refuses (ERROR) while
 * id_sequences is distributed.
 */
bool
citusblocks_remote(void)
{
	if (likely(route_known))
		return route_remote;
	if (!xact_callback_on)
	{
		RegisterXactCallback(citusblocks_xact_end, NULL);
		xact_callback_on = true;
	}
	citusblocks_decide();
	route_known = true;
	return route_remote;
}

/*
 * Reserve "n" IDs of "name" on the coordinator (0: its block_size),
 * committed there before this returns; with the row's increment, read in
 * the same statement.
 */
static void
citusblocks_reserve_step(const char *name, int64 n, int64 *first, int64 *last,
						 int64 *increment)
{
	char		count[32];
	const char *params[2] = {name, count};
	PGresult   *res;
	char	   *sql;

	snprintf(count, sizeof(count), INT64_FORMAT, n);
	/*
	 * A gapless sequence's numbers belong to a transaction on the
	 * coordinator, which a worker's statement is not part of: the
	 * reservation runs only if the row is not gapless (no row: the
	 * coordinator's own error), and no row comes back if it is.  The
	 * increment is the row's in the statement's snapshot, the range may be
	 * of a later one: a change of the increment committed in between has
	 * waited out the refill's lease (seq_lock_row()), so that range comes
	 * back too late to be served (citusblocks_refill()).
	 */
	sql = psprintf("SELECT r.first_id, r.last_id, q.increment"
				   " FROM (SELECT s.strategy, s.increment FROM (SELECT) one"
				   " LEFT JOIN %s.id_sequences s ON s.name = $1) q,"
				   " LATERAL (SELECT * FROM %s.seq_reserve_block($1%s)"
				   " WHERE q.strategy IS DISTINCT FROM 'gapless') r",
				   citusblocks_schema(), citusblocks_schema(), n > 0 ? ", $2::bigint" : "");
	res = citusconn_exec(sql, n > 0 ? 2 : 1, params);
	if (PQntuples(res) == 0 && PQnfields(res) == 3)
	{
		PQclear(res);
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gapless block sequence \"%s\" cannot be used on a Citus worker", name),
				 errdetail("Its numbers are taken in the caller's transaction on the coordinator, which a statement on a worker is not part of."),
				 errhint("Take gapless numbers on the coordinator, or use strategy 'table' for values set on workers.")));
	}
	if (PQntuples(res) != 1 || PQnfields(res) != 3)
	{
		PQclear(res);
		elog(ERROR, "unexpected answer of the citus coordinator to seq_reserve_block()");
	}
	*first = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	*last = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
	/* no row when the statement began (created since): no increment, 0 */
	*increment = PQgetisnull(res, 0, 2) ? 0 : strtoll(PQgetvalue(res, 0, 2), NULL, 10);
	PQclear(res);
}

/* seq_reserve_block() on a worker: as citusblocks_reserve_step(). */
void
citusblocks_reserve(const char *name, int64 n, int64 *first, int64 *last)
{
	int64		increment;

	citusblocks_reserve_step(name, n, first, last, &increment);
}

/*
 * How many IDs first, first + increment, ..., last are (0: the three do
 * not make such a list), without overflow at the int64 edges.
 */
static uint64
citusblocks_count(int64 first, int64 last, int64 increment)
{
	bool		up = increment > 0;
	uint64		span = up ? (uint64) last - (uint64) first : (uint64) first - (uint64) last;
	uint64		step = up ? (uint64) increment : (uint64) 0 - (uint64) increment;

	if (increment == 0 || (up ? last < first : last > first) ||
		span % step != 0 || span / step == PG_UINT64_MAX)
		return 0;
	return span / step + 1;
}

/*
 * Lease the next block of "name" on the coordinator (its worker_lease_until,
 * committed there); the lease in ms, which the coordinator's setting gives.
 */
static int
citusblocks_lease(const char *name)
{
	const char *params[1] = {name};
	PGresult   *res;
	int			ms;

	res = citusconn_exec(psprintf("SELECT %s.seq_worker_lease($1)", citusblocks_schema()),
						 1, params);
	if (PQntuples(res) != 1 || PQnfields(res) != 1 || PQgetisnull(res, 0, 0))
	{
		PQclear(res);
		elog(ERROR, "unexpected answer of the citus coordinator to seq_worker_lease()");
	}
	ms = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	return ms;
}

/* The entry of (this database, "name"), taken if "create"; NULL if none. */
static RemoteEntry *
citusblocks_entry(const char *name, bool create)
{
	RemoteEntry *found = NULL;
	RemoteEntry *spare = NULL;

	LWLockAcquire(shmem_lock(UIDGEN_LOCK_BLOCK_CACHE), create ? LW_EXCLUSIVE : LW_SHARED);
	for (int i = 0; i < REMOTE_ENTRIES && found == NULL; i++)
	{
		RemoteEntry *e = &rs->entries[i];

		if (e->dbid == MyDatabaseId && strcmp(e->name, name) == 0)
			found = e;
		else if (create && spare == NULL)
		{
			/* a free entry, or one that holds nothing and is not refilling */
			SpinLockAcquire(&e->mutex);
			if (e->dbid == InvalidOid || (e->left == 0 && !e->refilling))
				spare = e;
			SpinLockRelease(&e->mutex);
		}
	}
	if (found == NULL && spare != NULL)
	{
		SpinLockAcquire(&spare->mutex);
		spare->dbid = MyDatabaseId;
		strlcpy(spare->name, name, NAMEDATALEN);
		spare->next = 1;
		spare->left = 0;
		spare->increment = 1;
		spare->generation++;
		SpinLockRelease(&spare->mutex);
		found = spare;
	}
	LWLockRelease(shmem_lock(UIDGEN_LOCK_BLOCK_CACHE));
	return found;
}

/* A refill ended by an ERROR or FATAL: the entry is free for the next caller. */
static void
citusblocks_refill_abort(int code, Datum arg)
{
	RemoteEntry *e = (RemoteEntry *) DatumGetPointer(arg);

	SpinLockAcquire(&e->mutex);
	e->refilling = false;
	SpinLockRelease(&e->mutex);
}

/* Refill "e" from the coordinator; false if it was forgotten meanwhile. */
static bool
citusblocks_refill(RemoteEntry *e, const char *name, uint64 generation)
{
	int64		first = 0;
	int64		last = -1;
	int64		increment = 1;
	uint64		count;
	bool		kept;
	uint64		start = clock_boottime_ticks();	/* a suspend counts */
	uint64		expires;
	int			lease_ms = 0;

	/*
	 * An ERROR, and a FATAL (pg_terminate_backend() while the coordinator's
	 * answer is awaited), which never reaches a PG_CATCH: the callback runs
	 * in proc_exit too.  A kill -9 makes the postmaster reset all shared
	 * memory, this entry with it.
	 */
	PG_ENSURE_ERROR_CLEANUP(citusblocks_refill_abort, PointerGetDatum(e));
	{
		/* the lease first, timed from before it was asked for */
		lease_ms = citusblocks_lease(name);
		citusblocks_reserve_step(name, 0, &first, &last, &increment);
	}
	PG_END_ENSURE_ERROR_CLEANUP(citusblocks_refill_abort, PointerGetDatum(e));
	CRASH_POINT("citus-refill-after-reserve");
	expires = start + UIDGEN_MS_TO_TICKS(Max(lease_ms, 0));
	/*
	 * A range off the increment read with it was reserved after a change
	 * of the increment committed, which waited this lease out: a gap, as
	 * any late refill.  Within its lease it would be a fault.
	 */
	count = citusblocks_count(first, last, increment);
	if (count == 0 && clock_boottime_ticks() < expires)
	{
		citusblocks_refill_abort(0, PointerGetDatum(e));
		elog(ERROR, "the citus coordinator answered a range of sequence \"%s\" that its increment does not step through: "
			 INT64_FORMAT " to " INT64_FORMAT " by " INT64_FORMAT, name, first, last, increment);
	}
	SpinLockAcquire(&e->mutex);
	e->refilling = false;
	kept = e->generation == generation && count > 0;
	if (kept)
	{
		e->next = first;
		e->left = count;
		e->increment = increment;
		e->expires = expires;
	}
	SpinLockRelease(&e->mutex);
	return kept;
}

/* Refills of "name" came back with their lease over for uidgen.block_timeout: fail. */
static void
citusblocks_refill_timeout(RemoteEntry *e, const char *name)
{
	citusblocks_refill_abort(0, PointerGetDatum(e));
	ereport(ERROR,
			(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
			 errmsg("timed out waiting for a block of sequence \"%s\" from the citus coordinator", name),
			 errdetail("The blocks reserved within uidgen.block_timeout (%d ms) came back after their lease (uidgen.citus_block_lease) had run out.",
					   uidgen_block_timeout),
			 errhint("Raise uidgen.citus_block_lease on the coordinator above the time a refill takes.")));
}

/*
 * seq_next() on a Citus worker: one ID from the block this worker holds of
 * "name", refilled from the coordinator when it is used up.
 */
int64
citusblocks_next(const char *name)
{
	uint64		deadline = clock_monotonic_ticks() + UIDGEN_MS_TO_TICKS(uidgen_block_timeout);
	int			refills = 0;

	if (strlen(name) >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("block sequence \"%s\" does not exist", name)));
	for (;;)
	{
		RemoteEntry *e = citusblocks_entry(name, false);
		uint64		generation;

		if (e == NULL && (e = citusblocks_entry(name, true)) == NULL)
		{
			int64		first;
			int64		last;

			/* every entry busy: one ID straight from the coordinator */
			citusblocks_reserve(name, 1, &first, &last);
			return first;
		}
		SpinLockAcquire(&e->mutex);
		if (e->dbid == MyDatabaseId && strcmp(e->name, name) == 0)
		{
			/* the lease ran out (read now, locked): the rest is a gap */
			if (e->left > 0 && clock_boottime_ticks() >= e->expires)
				e->left = 0;
			if (e->left > 0)
			{
				int64		id = e->next;

				/* the successor only while there is one: never past last */
				if (--e->left > 0)
					e->next += e->increment;
				SpinLockRelease(&e->mutex);
				return id;
			}
			if (!e->refilling)
			{
				e->refilling = true;
				generation = e->generation;
				SpinLockRelease(&e->mutex);
				/* blocks that came back with their lease over: not forever */
				if (refills++ > 0 && clock_monotonic_ticks() >= deadline)
					citusblocks_refill_timeout(e, name);
				(void) citusblocks_refill(e, name, generation);
				continue;
			}
		}
		SpinLockRelease(&e->mutex);
		/* another backend is refilling it: wait, within the bound */
		if (clock_monotonic_ticks() >= deadline)
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("timed out waiting for a block of sequence \"%s\" from the citus coordinator", name),
					 errdetail("Another backend of this worker has been reserving the next block for longer than uidgen.block_timeout (%d ms).",
							   uidgen_block_timeout)));
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1,
						 uidgen_wait_event(&we_refill, "UidgenCitusRefill"));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* Forget the blocks this worker holds of "name" (NULL: all) of database "dbid". */
static void
citusblocks_forget(Oid dbid, const char *name)
{
	LWLockAcquire(shmem_lock(UIDGEN_LOCK_BLOCK_CACHE), LW_EXCLUSIVE);
	for (int i = 0; i < REMOTE_ENTRIES; i++)
	{
		RemoteEntry *e = &rs->entries[i];

		SpinLockAcquire(&e->mutex);
		if (e->dbid == dbid && (name == NULL || strcmp(e->name, name) == 0))
		{
			/* a refill under way sees the new generation and is thrown away */
			e->next = 1;
			e->left = 0;
			e->increment = 1;
			e->generation++;
		}
		SpinLockRelease(&e->mutex);
	}
	LWLockRelease(shmem_lock(UIDGEN_LOCK_BLOCK_CACHE));
}

/*
 * A database, or uidgen in it, is dropped (blocks.c's hook): its blocks
 * belong to sequences that are gone, and a sequence of the same name
 * created later starts again.
 */
void
citusblocks_forget_database(Oid dbid)
{
	if (rs != NULL)
		citusblocks_forget(dbid, NULL);
}

/* seq_on_coordinator(): do this database's block sequences live on the coordinator? */
Datum
seq_on_coordinator(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(citusblocks_remote());
}

/*
 * seq_coordinator_call(function, args): run the block sequence function
 * "function" of uidgen's schema with "args" (text, NULL for NULL) on the
 * coordinator; its result as text.  For seq_create() and the others on a
 * worker.
 */
Datum
seq_coordinator_call(PG_FUNCTION_ARGS)
{
	char	   *func = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(1);
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	const char **params;
	StringInfoData sql;
	PGresult   *res;
	char	   *out = NULL;

	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	params = palloc(sizeof(char *) * Max(n, 1));
	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT %s.%s(", citusblocks_schema(), quote_identifier(func));
	for (int i = 0; i < n; i++)
	{
		params[i] = nulls[i] ? NULL : TextDatumGetCString(elems[i]);
		appendStringInfo(&sql, "%s$%d", i > 0 ? ", " : "", i + 1);
	}
	appendStringInfoString(&sql, ")::text");
	/*
	 * seq_drop(), seq_advance() and seq_alter() there wait for the leases
	 * of worker blocks, up to twice uidgen.citus_block_lease (this node's
	 * value standing for the coordinator's).
	 */
	res = citusconn_exec_within(sql.data, n, params,
								(int) Min((int64) uidgen_block_timeout + 2 * (int64) uidgen_citus_block_lease,
										  INT_MAX));
	if (PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
		out = pstrdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	if (out == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(out));
}

/*
 * seq_forget(name): forget the blocks this worker holds of "name" (NULL:
 * of every sequence of this database); the coordinator's seq_alter(),
 * seq_advance() and seq_drop() call it on every worker.
 */
Datum
seq_forget(PG_FUNCTION_ARGS)
{
	shmem_require();
	citusblocks_forget(MyDatabaseId, PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0)));
	PG_RETURN_VOID();
}
