/*-------------------------------------------------------------------------
 *
 * walmark.c
 *	  Carry the primary's high-water mark to its standbys through WAL.
 *
 * Every time the primary moves its durable mark (clock/statefile.c), it
 * also writes the mark and its worker id to WAL with uidgen's own resource
 * manager and flushes it, before any tick above the old mark is handed
 * out.  It does not wait for standbys (the state lock is held, and LWLock
 * waits cannot be cancelled): under synchronous replication, a transaction
 * that stores an ID commits after the mark's record in WAL, so its commit,
 * once confirmed, has brought the mark to the standby too.
 *
 * This module knows the record: it writes it, describes it and checks it
 * in replay.  What a standby, or a server restoring a backup, does with a
 * replayed mark (remember it as its origin's, durably, so that the end of
 * recovery moves the clocks above it) is replicas/copies.c's, which
 * registers that function here; this module includes no module above it.
 *
 * The records change nothing but uidgen's shared memory, so crash recovery
 * on the primary itself (not a copy) ignores them: its state file already
 * holds a mark at least as high.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "lib/stringinfo.h"
#include "replication/walreceiver.h"
#include "storage/spin.h"

#include "clock/walmark.h"
#include "core/crashpoint.h"
#include "core/settings.h"

#define XLOG_UIDGEN_MARK 0x00
/* no record has it: only the fault "mark-record-op" of a test build writes it */
#define XLOG_UIDGEN_UNKNOWN 0x10

/* The record: a mark and the worker id of the server that wrote it. */
typedef struct xl_uidgen_mark
{
	uint64		mark;			/* no tick above it was handed out */
	int32		worker_id;		/* uidgen.worker_id of the primary */
} xl_uidgen_mark;

/* What replays a mark: set by walmark_register(). */
static WalMarkReplay walmark_replay = NULL;

/* Write a mark record and flush it. */
void
walmark_log(uint64 mark, int32 worker_id)
{
	xl_uidgen_mark rec;
	XLogRecPtr	lsn;

	memset(&rec, 0, sizeof(rec));
	rec.mark = mark;
	rec.worker_id = worker_id;
	XLogBeginInsert();
	/* (a test build writes it short at "mark-record-short": replay refuses it) */
	XLogRegisterData((char *) &rec, CRASH_POINT_ARMED("mark-record-short") ?
					 offsetof(xl_uidgen_mark, worker_id) : sizeof(rec));
	/* (and at "mark-record-op" with an op code it has not: replay refuses it) */
	lsn = XLogInsert(UIDGEN_RMGR_ID, CRASH_POINT_ARMED("mark-record-op") ?
					 XLOG_UIDGEN_UNKNOWN : XLOG_UIDGEN_MARK);
	XLogFlush(lsn);
}

/*
 * Replay: check the record, and hand the mark and its worker id to the
 * module that keeps what a copy learns from its origin (walmark_register()).
 */
static void
walmark_redo(XLogReaderState *record)
{
	xl_uidgen_mark *rec = (xl_uidgen_mark *) XLogRecGetData(record);

	if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) != XLOG_UIDGEN_MARK)
		elog(PANIC, "uidgen redo: unknown op code %u", XLogRecGetInfo(record));
	if (XLogRecGetDataLen(record) != sizeof(xl_uidgen_mark))
		ereport(PANIC,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("uidgen redo: mark record of %u bytes, expected %zu",
						XLogRecGetDataLen(record), sizeof(xl_uidgen_mark)),
				 errdetail("The record was not written by this version of uidgen, or the WAL is damaged.")));
	walmark_replay(rec->mark, rec->worker_id);
}

/* pg_waldump and error contexts: the record's contents. */
static void
walmark_desc(StringInfo buf, XLogReaderState *record)
{
	xl_uidgen_mark *rec = (xl_uidgen_mark *) XLogRecGetData(record);

	appendStringInfo(buf, "mark " UINT64_FORMAT " ms after the Unix epoch, worker id %d",
					 UIDGEN_TICKS_TO_MS(rec->mark), rec->worker_id);
}

/* The record's name. */
static const char *
walmark_identify(uint8 info)
{
	return (info & ~XLR_INFO_MASK) == XLOG_UIDGEN_MARK ? "MARK" : NULL;
}

static RmgrData walmark_rmgr = {
	.rm_name = "uidgen",
	.rm_redo = walmark_redo,
	.rm_desc = walmark_desc,
	.rm_identify = walmark_identify,
};

/*
 * Register the resource manager (from _PG_init, when preloaded), with the
 * function that replays a mark (replicas/copies.c).
 */
void
walmark_register(WalMarkReplay replay)
{
	walmark_replay = replay;
	RegisterCustomRmgr(UIDGEN_RMGR_ID, &walmark_rmgr);
}

/*
 * At promotion: did this server receive all the WAL its primary had
 * written, as of the primary's last message?  If not, a mark it never saw
 * may cover IDs above the one it replayed: say so.
 */
void
walmark_check_stream(void)
{
	XLogRecPtr	received = GetWalRcvFlushRecPtr(NULL, NULL);
	XLogRecPtr	primary_end;

	SpinLockAcquire(&WalRcv->mutex);
	primary_end = WalRcv->latestWalEnd;
	SpinLockRelease(&WalRcv->mutex);
	if (primary_end > received)
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("uidgen may not have the last high-water mark of the former primary"),
				 errdetail("When replication stopped, the primary had written %llu bytes of WAL that this server did not receive.",
						   (unsigned long long) (primary_end - received)),
				 errhint("Snowflake IDs are still unique if this server has its own uidgen.worker_id. Synchronous replication makes sure a promoted standby has the last mark.")));
}
