/*-------------------------------------------------------------------------
 *
 * citus.c
 *	  Worker ids from Citus: a node of a Citus cluster with no
 *	  uidgen.worker_id and no registry takes its worker id from its Citus
 *	  group id (pg_dist_local_group.groupid), which Citus gives each node
 *	  when it places it and never gives another node.
 *
 * The group id is read in a database where the citus extension is
 * installed, by the first snowflake_next() of each backend there, and
 * adopted server-wide: made durable in the state file (and on a primary in
 * a WAL mark record) before any ID goes out under it
 * (statefile_adopt_worker()), and kept across restarts.  A backend of a
 * database with citus always generates under its own database's group id;
 * databases without citus use the one adopted last.  A node
 * whose group id changes (removed and added again: Citus gives it a new
 * group) adopts the new one at the next backend's first ID; ticks are
 * unique to the server, so IDs under the old and the new worker id cannot
 * repeat each other.
 *
 * A node Citus has not placed says group 0, as the coordinator does; like
 * citus_is_coordinator(), group 0 is the coordinator only where
 * pg_dist_node has rows.  An unplaced node with no adopted worker id
 * refuses.  A group id that does not fit uidgen.worker_bits refuses.
 *
 * Conflicts: uidgen_citus_check(), on the coordinator, collects every
 * node's worker id and source (uidgen_citus_worker() on each node) and
 * has each node that shares its worker id with another refuse
 * (uidgen_citus_refuse()), durably: the refusal is kept in the state file
 * (statefile_refuse_worker(), durable before the check reports it) and
 * holds across restarts, crashes included, for as long as the node
 * generates under that worker id.  The check lifts it, durably too, once
 * every node answers with a worker id no other node has.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type_d.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "clock/lease.h"
#include "clock/statefile.h"
#include "core/settings.h"
#include "core/shmem.h"
#include "replicas/citus.h"
#include "replicas/copies.h"

PG_FUNCTION_INFO_V1(uidgen_citus_worker);
PG_FUNCTION_INFO_V1(uidgen_citus_refuse);

/* This backend read its database's group id (and adopted it). */
static bool group_checked = false;

/* The group id this backend's database adopted, or -1 (no citus here). */
static int32 own_group = -1;

/* The error of a server with no worker id from any source. */
static void
citus_refuse_no_worker(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("uidgen.worker_id is not set"),
			 errdetail("Each server that generates snowflake IDs for the same data needs a worker id of its own; uidgen does not choose one."),
			 errhint("Set uidgen.worker_id to a number from 0 to %d that no other such server uses and restart the server, or lease one from a registry with uidgen.worker_id_registry.",
					 (1 << uidgen_settings.worker_bits) - 1)));
}

/*
 * Read this node's Citus group id in this database; false if citus is not
 * installed here.  "placed": Citus has put the node in a group.
 */
static bool
citus_read_group(int32 *group, bool *placed)
{
	bool		isnull;

	if (!IsTransactionState() || !OidIsValid(get_extension_oid("citus", true)))
		return false;
	SPI_connect();
	if (SPI_execute("SELECT groupid, EXISTS (SELECT FROM pg_catalog.pg_dist_node) "
					"FROM pg_catalog.pg_dist_local_group", true, 0) != SPI_OK_SELECT ||
		SPI_processed != 1)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("could not read this node's citus group id"),
				 errdetail("pg_dist_local_group does not hold one row.")));
	*group = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	*placed = *group != 0 ||
		DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	SPI_finish();
	return true;
}

/* Adopt this node's Citus group id as the worker id, if it is placed. */
static void
citus_adopt_group(void)
{
	int32		group;
	bool		placed;

	own_group = -1;
	/* once adopted, a database without citus need not look again */
	if (!citus_read_group(&group, &placed))
	{
		group_checked = statefile_adopted_worker() >= 0;
		return;
	}
	if (!placed)
	{
		/* a node once placed keeps the group id Citus gave it: never reused */
		group_checked = statefile_adopted_worker() >= 0;
		if (group_checked)
			return;
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("this node is not placed in a citus cluster yet"),
				 errdetail("uidgen takes the worker id of a Citus node from its group id, and Citus has not given this node one: its group id is 0 and pg_dist_node is empty, as on a node not added yet."),
				 errhint("Add the node with citus_add_node() on the coordinator (on the coordinator itself, run citus_set_coordinator_host()), or set uidgen.worker_id.")));
	}
	if (group < 0 || group >= (1 << uidgen_settings.worker_bits))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("citus group id %d does not fit in %d worker bits", group,
						uidgen_settings.worker_bits),
				 errdetail("uidgen takes the worker id of a Citus node from its group id; worker ids go from 0 to %d.",
						   (1 << uidgen_settings.worker_bits) - 1),
				 errhint("Lease worker ids from a registry (uidgen.worker_id_registry) on every node, or set a distinct uidgen.worker_id on each.")));
	if (group != statefile_adopted_worker())
	{
		statefile_adopt_worker(group);
		ereport(LOG,
				(errmsg("uidgen adopted worker id %d, this node's citus group id", group)));
	}
	own_group = group;
	group_checked = true;
}

/*
 * The worker id of a server with neither uidgen.worker_id nor a registry:
 * the one adopted from Citus, read again once in each backend of a
 * database with citus; refused if there is none.
 */
int32
citus_worker_id(void)
{
	int32		worker;

	/* another database of this server may have adopted its own group id */
	if (!group_checked ||
		(own_group >= 0 && statefile_adopted_worker() != own_group))
		citus_adopt_group();
	worker = own_group >= 0 ? own_group : statefile_adopted_worker();
	if (worker < 0)
		citus_refuse_no_worker();
	return worker;
}

/* The worker id IDs go out under now, without reading Citus; -1 if none. */
static int32
citus_worker_in_force(void)
{
	return uidgen_registry_on ? lease_worker_id() : statefile_own_worker();
}

/*
 * Does another node of the Citus cluster use this node's worker id?  The
 * refusal is the state file's (statefile_refuse_worker()) and holds for the
 * worker id it was found with: a node given another one generates again.
 */
bool
citus_conflict(void)
{
	int32		refused = statefile_refused_worker();

	return unlikely(refused >= 0) && refused == citus_worker_in_force();
}

/* Refuse to generate: another node uses this node's worker id. */
void
citus_refuse_conflict(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("worker id %d is also used by another node of the citus cluster",
					statefile_refused_worker()),
			 errdetail("uidgen_citus_check() found it on more than one node; IDs from them could repeat. The refusal is kept in the state file and holds across restarts."),
			 errhint("Give each node its own uidgen.worker_id, or remove uidgen.worker_id everywhere to take the Citus group ids, then run SELECT uidgen_citus_check() on the coordinator again: it lifts the refusal once every node answers with a worker id of its own.")));
}

/* Where the worker id comes from: "setting", "registry", "citus", or NULL. */
const char *
citus_worker_source(void)
{
	if (uidgen_registry_on)
		return "registry";
	if (uidgen_settings.worker_id_set)
		return "setting";
	if (statefile_adopted_worker() >= 0)
		return "citus";
	return NULL;
}

/*
 * uidgen_citus_worker(): this node's worker id and its source as
 * "worker,source", adopting the Citus group id if that is the source;
 * for uidgen_citus_check() on each node.
 */
Datum
uidgen_citus_worker(PG_FUNCTION_ARGS)
{
	int32		worker;

	shmem_require();
	if (uidgen_registry_on)
	{
		worker = lease_worker_id();
		if (worker < 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("no worker id is leased from the registry yet"),
					 errdetail("This node leases its worker id from uidgen.worker_id_registry and holds no lease now."),
					 errhint("See lease_holder and lease_deadline in uidgen_status() and the server log.")));
	}
	else if (uidgen_settings.worker_id_set)
		worker = uidgen_settings.worker_id;
	else
	{
		/* a copy refused for its origin's worker id adopts nothing (902) */
		copies_guard();
		if (copies_refused())
			copies_refuse();
		group_checked = false;
		worker = citus_worker_id();
	}
	PG_RETURN_TEXT_P(cstring_to_text(psprintf("%d,%s", worker, citus_worker_source())));
}

/*
 * uidgen_citus_refuse(workers, complete): refuse snowflake_next(), durably
 * (statefile_refuse_worker()), if this node's worker id is among "workers"
 * (worker ids that uidgen_citus_check() found on more than one node); if
 * it is not, and "complete" says that every node of the cluster answered,
 * lift a refusal this node holds.  True if this node refuses.
 */
Datum
uidgen_citus_refuse(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	bool		complete = PG_GETARG_BOOL(1);
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int32		own;
	bool		found = false;

	shmem_require();
	own = citus_worker_in_force();
	deconstruct_array(arr, INT4OID, sizeof(int32), true, TYPALIGN_INT, &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
		found |= !nulls[i] && own >= 0 && DatumGetInt32(elems[i]) == own;
	if (found)
	{
		statefile_refuse_worker(own);
		ereport(LOG,
				(errmsg("uidgen refuses snowflake IDs: worker id %d is also used by another node of the citus cluster", own)));
	}
	else if (complete && statefile_refused_worker() >= 0)
	{
		statefile_refuse_worker(-1);
		ereport(LOG,
				(errmsg("uidgen no longer refuses snowflake IDs: no other node of the citus cluster uses worker id %d", own)));
	}
	PG_RETURN_BOOL(found);
}
