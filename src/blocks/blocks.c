/*-------------------------------------------------------------------------
 *
 * blocks.c
 *	  Block sequences: seq_reserve_block(), seq_next(), the invalidation
 *	  trigger on id_sequences, and the registration of the allocator's
 *	  slots and queue (allocslots.c, allocqueue.c) and of the seq_next()
 *	  cache (cachetable.c), with the hook that frees what a dropped
 *	  database or extension leaves behind.
 *
 * The administrative functions (seq_create() and friends) are SQL; see the
 * install script.  The functions here never run SQL in the caller's
 * session: reservations are made by the allocator, in its own transaction,
 * so the caller's search_path, isolation level and open transaction do not
 * matter to them.
 *
 * What is durable before what, for a caller (crash points in quotes):
 *	1. the range committed by the allocator (allocworker.c's table)
 *	2. seq_reserve_block(): the range answered to this backend (strategy
 *	   'sequence'), or carved from the shared cache (strategy 'table',
 *	   blockcache.c, whose ranges are committed as in 1)
 *	   "reserve-before-return"
 *	3. the range returned to the client
 * and for seq_next(), whose blocks are refills committed the same way:
 *	1. the refill committed, then stored in the shared cache (blockcache.c)
 *	2. one ID taken from the cache (under the entry's mutex)
 *	   "next-before-return"
 *	3. the ID returned to the client
 * Everything after 1 is in memory: a crash loses it, a gap.  On a Citus
 * worker both calls act on the coordinator's sequences instead
 * (replicas/citusblocks.c, which has its own table).
 * Strategy 'gapless' (gapless.c) has nothing of its own to order: its
 * numbers are an UPDATE in the caller's transaction, committed with it.
 * seq_advance(), seq_alter() and seq_drop() are SQL in the caller's own
 * transaction, with the row locked FOR UPDATE (which keeps the allocator
 * off it): one commit, nothing to order.  seq_unprefetch() (from
 * seq_lock_row()) frees the cache entry before that commit: a crash
 * ("unprefetch-after-release") or a rollback after it leaves
 * next_block_start where it was, a gap.
 *
 * Locking: none here.  The shared state lives in allocslots.c,
 * allocqueue.c, cachetable.c and blockcache.c, and their locks are
 * described there; the LWLock tranche "uidgen blocks" holds both locks
 * (core/shmem.c).
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xlog.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/dependency.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "blocks/allocqueue.h"
#include "blocks/allocslots.h"
#include "blocks/blockcache.h"
#include "blocks/cachetable.h"
#include "blocks/blocks.h"
#include "replicas/citusblocks.h"
#include "replicas/copies.h"
#include "core/crashpoint.h"
#include "blocks/failover.h"
#include "blocks/gapless.h"
#include "blocks/leasewait.h"
#include "blocks/outcome.h"
#include "blocks/seqrow.h"
#include "core/shmem.h"

PG_FUNCTION_INFO_V1(seq_reserve_block);
PG_FUNCTION_INFO_V1(seq_next);
PG_FUNCTION_INFO_V1(seq_invalidate_trigger);
PG_FUNCTION_INFO_V1(seq_prefetched);
PG_FUNCTION_INFO_V1(seq_unprefetch);

static object_access_hook_type prev_object_access_hook = NULL;

/*
 * object_access_hook: when a database is dropped, its allocator must leave
 * it (DROP DATABASE waits a few seconds for that); when the extension is
 * dropped, the database's cached blocks belong to a table that is gone.
 */
static void
blocks_object_access(ObjectAccessType access, Oid classId, Oid objectId,
					 int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access != OAT_DROP)
		return;
	if (classId == DatabaseRelationId)
	{
		allocator_request_exit(objectId);
		cachetable_invalidate(objectId, NULL);
		citusblocks_forget_database(objectId);
	}
	else if (classId == RelationRelationId && subId == 0 && !creating_extension)
	{
		char	   *rel = get_rel_name(objectId);
		Oid			ext = InvalidOid;
		char	   *name = NULL;

		/* DROP EXTENSION: uidgen's id_sequences waits out worker leases */
		if (rel != NULL && strcmp(rel, "id_sequences") == 0)
			ext = getExtensionOfObject(RelationRelationId, objectId);
		if (OidIsValid(ext))
			name = get_extension_name(ext);
		if (name != NULL && strcmp(name, "uidgen") == 0)
			leasewait_before_drop(objectId);
	}
	else if (classId == ExtensionRelationId)
	{
		char	   *name = get_extension_name(objectId);

		if (name != NULL && strcmp(name, "uidgen") == 0)
		{
			cachetable_invalidate(MyDatabaseId, NULL);
			citusblocks_forget_database(MyDatabaseId);
		}
	}
}

/* Install the hooks block sequences need (from _PG_init, when preloaded). */
void
blocks_register(void)
{
	allocslots_register();
	allocqueue_register();
	cachetable_register();
	leasewait_register();
	prev_object_access_hook = object_access_hook;
	object_access_hook = blocks_object_access;
}

/* Refuse to reserve where a reservation cannot be made. */
static void
blocks_check_callable(const char *what)
{
	shmem_require();
	PreventCommandDuringRecovery(what);
	PreventCommandIfReadOnly(what);
	copies_check_blocks();
}

/* The sequence name argument. */
static char *
blocks_name_arg(FunctionCallInfo fcinfo)
{
	return text_to_cstring(PG_GETARG_TEXT_PP(0));
}

/* seq_reserve_block(name [, n]): n (or block_size) consecutive IDs. */
Datum
seq_reserve_block(PG_FUNCTION_ARGS)
{
	char	   *name = blocks_name_arg(fcinfo);
	int64		n = PG_NARGS() > 1 ? PG_GETARG_INT64(1) : 0;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	AllocResult res;
	CacheGot	got;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	if (PG_NARGS() > 1 && (n <= 0 || n > ALLOC_MAX_IDS))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of IDs must be between 1 and %d", ALLOC_MAX_IDS),
				 errdetail("The request was for " INT64_FORMAT " IDs.", n)));
	blocks_check_callable("seq_reserve_block()");
	/* a Citus worker: the coordinator's range, committed there */
	if (citusblocks_remote())
		citusblocks_reserve(name, n, &res.first, &res.last);
	/* strategy 'table': carved from the range the cache holds ahead */
	else if ((got = blockcache_reserve(name, fcinfo->flinfo->fn_oid, n, &res)) ==
			 BLOCKCACHE_GAPLESS)
	{
		res.first = gapless_take(fcinfo->flinfo->fn_oid, name, n, &res.last);
	}
	else if (got == BLOCKCACHE_NOT_TABLE)
	{
		/* an unknown name never reaches (nor starts) the allocator */
		(void) seqrow_require(fcinfo->flinfo->fn_oid, name);
		allocator_reserve(name, n, &res);
		if (res.outcome != ALLOC_OK)
			outcome_raise(name, &res);
	}
	CRASH_POINT("reserve-before-return");

	/* the executor has built the result type already: do not build it again */
	InitMaterializedSRF(fcinfo,
						rsinfo->expectedDesc != NULL ? MAT_SRF_USE_EXPECTED_DESC : 0);
	values[0] = Int64GetDatum(res.first);
	values[1] = Int64GetDatum(res.last);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}

/* seq_next(name): one ID, from the block cached in shared memory. */
Datum
seq_next(PG_FUNCTION_ARGS)
{
	char	   *name = blocks_name_arg(fcinfo);
	int64		id;

	blocks_check_callable("seq_next()");
	/* a Citus worker: from a block it reserved from the coordinator */
	if (citusblocks_remote())
		id = citusblocks_next(name);
	else if (!blockcache_next(name, fcinfo->flinfo->fn_oid, &id))
		(void) gapless_take(fcinfo->flinfo->fn_oid, name, 1, &id);	/* first = last */
	CRASH_POINT("next-before-return");
	PG_RETURN_INT64(id);
}

/*
 * seq_prefetched(): per sequence of this database in the shared cache, the
 * next ID to carve and how many IDs are held ahead of it (the rest of the
 * committed ranges: next_block_start of id_sequences is their end).
 */
Datum
seq_prefetched(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	CacheReport *reports;
	int			n;

	/* (without the preload: no rows, so that id_sequences_prefetch works) */
	InitMaterializedSRF(fcinfo, 0);
	reports = palloc(sizeof(CacheReport) * cachetable_size());
	n = blockcache_report(MyDatabaseId, reports, cachetable_size());
	for (int i = 0; i < n; i++)
	{
		Datum		values[5];
		bool		nulls[5] = {false, !reports[i].known, false,
		reports[i].refill == 0, false};

		values[0] = CStringGetTextDatum(reports[i].name);
		values[1] = Int64GetDatum(reports[i].next_id);
		values[2] = Int64GetDatum(reports[i].ahead);
		values[3] = Int64GetDatum(reports[i].refill);
		values[4] = TimestampTzGetDatum(reports[i].last_used);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * seq_unprefetch(name, next_block_start): drop what the cache holds of a
 * sequence and return where its row may move back to (cachetable.c).  Only
 * for seq_lock_row(), with the row locked FOR UPDATE.
 */
Datum
seq_unprefetch(PG_FUNCTION_ARGS)
{
	char	   *name = blocks_name_arg(fcinfo);
	int64		end = PG_GETARG_INT64(1);
	int64		back;

	if (strlen(name) >= NAMEDATALEN)
		PG_RETURN_INT64(end);
	back = cachetable_unprefetch(name, end);
	CRASH_POINT("unprefetch-after-release");
	PG_RETURN_INT64(back);
}

/* The value of column "name" of a row of id_sequences, or NULL. */
static char *
blocks_row_name(HeapTuple tuple, TupleDesc desc)
{
	int			attno = SPI_fnumber(desc, "name");

	if (tuple == NULL || attno <= 0)
		return NULL;
	return SPI_getvalue(tuple, desc, attno);
}

/*
 * Trigger on id_sequences (UPDATE and DELETE of rows, TRUNCATE): a changed
 * or dropped sequence must not be served from blocks cached before.  It is
 * ENABLE ALWAYS, so it fires under session_replication_role = replica too;
 * the allocator's own updates, which only hand blocks out, are ignored.
 */
Datum
seq_invalidate_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	TupleDesc	desc;
	char	   *name;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "seq_invalidate_trigger: not called by the trigger manager");
	if (allocator_is_this_process())
		return PointerGetDatum(NULL);
	if (TRIGGER_FIRED_BY_TRUNCATE(trigdata->tg_event))
	{
		cachetable_invalidate(MyDatabaseId, NULL);
		return PointerGetDatum(NULL);
	}
	desc = RelationGetDescr(trigdata->tg_relation);
	/* a Citus worker's lease recorded (leasewait.c): nothing changes */
	if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) &&
		leasewait_only_lease(trigdata->tg_trigtuple, trigdata->tg_newtuple, desc))
		return PointerGetDatum(NULL);
	/* a number taken from a sequence of strategy 'gapless', never cached */
	if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) &&
		seqrow_is_gapless(trigdata->tg_trigtuple, desc) &&
		seqrow_is_gapless(trigdata->tg_newtuple, desc))
		return PointerGetDatum(NULL);
	name = blocks_row_name(trigdata->tg_trigtuple, desc);
	if (name != NULL)
		cachetable_invalidate(MyDatabaseId, name);
	if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
	{
		name = blocks_row_name(trigdata->tg_newtuple, desc);
		if (name != NULL)
			cachetable_invalidate(MyDatabaseId, name);
	}
	return PointerGetDatum(NULL);
}
