/*-------------------------------------------------------------------------
 *
 * walmark.c
 *	  Carry the primary's high-water mark to its standbys through WAL.
 *
 * Every time the primary moves its durable mark (statefile.c), it also
 * writes the mark and its worker id to WAL with uidgen's own resource
 * manager and flushes it, before any tick above the old mark is handed
 * out.  It does not wait for standbys (UidgenShared->lock is held, and
 * LWLock waits cannot be cancelled): under synchronous replication, a
 * transaction that stores an ID commits after the mark's record in WAL,
 * so its commit, once confirmed, has brought the mark to the standby too.  A standby, and a server restoring a backup,
 * replay the record into shared memory (origin_mark, origin_worker, under
 * UidgenShared->lock) and make it durable in the state file at once.  At
 * the end of recovery copies.c moves the clocks above that mark, so a
 * promoted standby issues IDs above every ID its primary could have issued
 * before the last mark it replayed, whatever the two clocks say.
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

#include "core/crashpoint.h"
#include "core/shmem.h"
#include "clock/statefile.h"
#include "clock/walmark.h"

#define XLOG_UIDGEN_MARK 0x00

/* The record: a mark and the worker id of the server that wrote it. */
typedef struct xl_uidgen_mark
{
	uint64		mark;			/* no tick above it was handed out */
	int32		worker_id;		/* uidgen.worker_id of the primary */
} xl_uidgen_mark;

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
	XLogRegisterData((char *) &rec, sizeof(rec));
	lsn = XLogInsert(UIDGEN_RMGR_ID, XLOG_UIDGEN_MARK);
	XLogFlush(lsn);
}

/*
 * Replay: remember the mark and who wrote it, if this server is a copy, and
 * make it durable in the state file before replay goes on: a restartpoint
 * past this record would otherwise leave a crash that follows with an
 * older mark than the primary's (replay restarts after the record).
 */
static void
walmark_redo(XLogReaderState *record)
{
	UidgenShared *s = uidgen_shared;
	xl_uidgen_mark *rec = (xl_uidgen_mark *) XLogRecGetData(record);
	bool		sticky;

	if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) != XLOG_UIDGEN_MARK)
		elog(PANIC, "uidgen redo: unknown op code %u", XLogRecGetInfo(record));
	if (XLogRecGetDataLen(record) != sizeof(xl_uidgen_mark))
		ereport(PANIC,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("uidgen redo: mark record of %u bytes, expected %zu",
						XLogRecGetDataLen(record), sizeof(xl_uidgen_mark)),
				 errdetail("The record was not written by this version of uidgen, or the WAL is damaged.")));
	if (s == NULL)
		return;
	LWLockAcquire(s->lock, LW_EXCLUSIVE);

	/*
	 * A copy other than a standby whose origin has this server's own worker
	 * id (a copy of a standby with the standby's worker id, copies_start())
	 * keeps it: its origin issued IDs under it, whatever the records replayed
	 * say.  A standby's origin is its primary's, and a former primary
	 * rejoining as a standby starts with its own worker id there.
	 */
	sticky = s->copy_reason != UIDGEN_COPY_STANDBY &&
		s->origin_worker == uidgen_settings.worker_id;
	if (s->copy_reason != UIDGEN_COPY_NONE &&
		(rec->mark > pg_atomic_read_u64(&s->origin_mark) ||
		 (rec->worker_id != s->origin_worker && !sticky)))
	{
		if (rec->mark > pg_atomic_read_u64(&s->origin_mark))
			pg_atomic_write_u64(&s->origin_mark, rec->mark);
		if (!sticky)
			s->origin_worker = rec->worker_id;
		CRASH_POINT("redo-mark-before-file");
		if (s->problem != UIDGEN_STATE_CORRUPT)
			statefile_save(s, ERROR);
	}
	LWLockRelease(s->lock);
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

/* Register the resource manager (from _PG_init, when preloaded). */
void
walmark_register(void)
{
	RegisterCustomRmgr(UIDGEN_RMGR_ID, &walmark_rmgr);
}
