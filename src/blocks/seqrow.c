/*-------------------------------------------------------------------------
 *
 * seqrow.c
 *	  Does a block sequence exist?  The calling backend looks its row up in
 *	  id_sequences before it starts or wakes an allocator, or takes an
 *	  entry of the seq_next() cache, so that a name that does not exist
 *	  costs its caller an index lookup and nobody else anything.
 *
 * The lookup reads the primary key index directly, with a fresh snapshot
 * (the caller's isolation level and snapshot play no part, as for the
 * reservation itself) and without privilege checks, search_path or SPI.
 * It sees the caller's own uncommitted changes; the allocator, which does
 * not, still has the last word (a sequence created by the caller's open
 * transaction is reported unknown by it, as before).
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"

#include "blocks/outcome.h"
#include "blocks/seqrow.h"

/* id_sequences, found next to a function of the extension (same schema). */
Oid
seqrow_table(Oid funcid)
{
	Oid			relid = get_relname_relid("id_sequences", get_func_namespace(funcid));

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"id_sequences\" of extension \"uidgen\" does not exist")));
	return relid;
}

/*
 * Is there a row for the name in the table, as of now?  *strategy: its
 * strategy ('table' for every row of 0.1.0's table, which lacks the
 * column).
 */
static bool
seqrow_exists(Oid table, const char *name, SeqStrategy *kind)
{
	Relation	rel = table_open(table, AccessShareLock);
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	Oid			pkey;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	AttrNumber	strategy;
	bool		found;

	list_free(RelationGetIndexList(rel));	/* sets rd_pkindex */
	pkey = rel->rd_pkindex;
	if (!OidIsValid(pkey))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"id_sequences\" of extension \"uidgen\" has no primary key")));
	/* compare as the index does, in the column's collation */
	ScanKeyEntryInitialize(&key, 0, 1, BTEqualStrategyNumber, InvalidOid,
						   TupleDescAttr(RelationGetDescr(rel), 0)->attcollation,
						   F_TEXTEQ, CStringGetTextDatum(name));
	scan = systable_beginscan(rel, pkey, true, snapshot, 1, &key);
	tuple = systable_getnext(scan);
	found = HeapTupleIsValid(tuple);
	strategy = get_attnum(table, "strategy");
	*kind = SEQ_TABLE;
	if (found && strategy != InvalidAttrNumber)
	{
		bool		isnull;
		Datum		value = heap_getattr(tuple, strategy, RelationGetDescr(rel), &isnull);
		char	   *kindname = isnull ? "table" : TextDatumGetCString(value);

		*kind = strcmp(kindname, "gapless") == 0 ? SEQ_GAPLESS :
			strcmp(kindname, "sequence") == 0 ? SEQ_SEQUENCE : SEQ_TABLE;
	}
	systable_endscan(scan);
	UnregisterSnapshot(snapshot);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * Raise the usual "does not exist" error (42704) if the sequence has no
 * row; funcid is the calling function of the extension.  Returns the
 * sequence's strategy.
 */
SeqStrategy
seqrow_require(Oid funcid, const char *name)
{
	AllocResult unknown = {.outcome = ALLOC_UNKNOWN};
	SeqStrategy kind = SEQ_TABLE;

	if (strlen(name) >= NAMEDATALEN || !seqrow_exists(seqrow_table(funcid), name, &kind))
		outcome_raise(name, &unknown);
	return kind;
}

/* Is a row of id_sequences of strategy 'gapless'? */
bool
seqrow_is_gapless(HeapTuple tuple, TupleDesc desc)
{
	int			attno = SPI_fnumber(desc, "strategy");
	char	   *value;

	if (attno <= 0)
		return false;
	value = SPI_getvalue(tuple, desc, attno);
	return value != NULL && strcmp(value, "gapless") == 0;
}
