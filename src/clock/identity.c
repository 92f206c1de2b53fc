/*-------------------------------------------------------------------------
 *
 * identity.c
 *	  Tell a data directory's own server from a copy of it.
 *
 * A promoted standby, a clone made with pg_basebackup, a point-in-time
 * restore and a data directory copied while stopped all start with the
 * state file of the server they were copied from, and usually with its
 * configuration, worker id included.  What differs is how they start (a
 * signal file, a backup label), and what the state file vouches for: the
 * system identifier, the timeline and the inode of the data directory.
 * This module reads both; copies.c decides what a copy may do.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/xlog.h"
#include "miscadmin.h"

#include "clock/identity.h"

/* The system identifier and data directory; no timeline (unknown at start-up). */
static void
identity_fixed(UidgenIdentity *id)
{
	struct stat st;

	id->sysid = GetSystemIdentifier();
	id->dir_ino = stat(DataDir, &st) == 0 ? (uint64) st.st_ino : 0;
	id->timeline = 0;
}

/* This server's identity; the timeline only once recovery has ended. */
void
identity_current(UidgenIdentity *id)
{
	identity_fixed(id);
	if (!RecoveryInProgress())
		id->timeline = GetWALInsertionTimeLine();
}

/*
 * At start-up, in the postmaster: why the data directory is a copy of the
 * server that wrote the state file, or UIDGEN_COPY_NONE.
 */
UidgenCopyReason
identity_copy_at_start(const UidgenIdentity *vouched)
{
	UidgenIdentity now;

	if (access(STANDBY_SIGNAL_FILE, F_OK) == 0)
		return UIDGEN_COPY_STANDBY;
	if (access(RECOVERY_SIGNAL_FILE, F_OK) == 0)
		return UIDGEN_COPY_RECOVERY;
	if (access(BACKUP_LABEL_FILE, F_OK) == 0)
		return UIDGEN_COPY_BASE_BACKUP;
	identity_fixed(&now);
	if (vouched->sysid != 0 && vouched->sysid != now.sysid)
		return UIDGEN_COPY_SYSTEM;
	if (vouched->dir_ino != 0 && vouched->dir_ino != now.dir_ino)
		return UIDGEN_COPY_DIRECTORY;
	return UIDGEN_COPY_NONE;
}

/* Each reason: as uidgen_status() shows it, and as a sentence for messages. */
static const struct
{
	const char *name;
	const char *detail;
}			reasons[] = {
	[UIDGEN_COPY_STANDBY] = {"standby",
	"This server was a standby and has been promoted."},
	[UIDGEN_COPY_RECOVERY] = {"recovery",
	"This server was restored from a backup and its WAL (point-in-time recovery)."},
	[UIDGEN_COPY_BASE_BACKUP] = {"base backup",
	"This server was started from a base backup."},
	[UIDGEN_COPY_TIMELINE] = {"timeline",
	"This server runs on another timeline than the one its state file was written on."},
	[UIDGEN_COPY_DIRECTORY] = {"data directory",
	"This server's data directory is not the one its state file was written in."},
	[UIDGEN_COPY_SYSTEM] = {"system identifier",
	"This server's system identifier is not the one its state file was written under."},
};

/* The reason as uidgen_status() shows it; NULL for UIDGEN_COPY_NONE. */
const char *
identity_reason_name(UidgenCopyReason reason)
{
	/* (a reason read from a state file is a byte: never past the table) */
	return (unsigned) reason < lengthof(reasons) ? reasons[reason].name : NULL;
}

/* The reason as a sentence, for messages; NULL for UIDGEN_COPY_NONE. */
const char *
identity_reason_detail(UidgenCopyReason reason)
{
	return (unsigned) reason < lengthof(reasons) ? reasons[reason].detail : NULL;
}
