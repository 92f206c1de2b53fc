/*-------------------------------------------------------------------------
 *
 * upgrade.c
 *	  Carry the high-water mark across pg_upgrade.
 *
 * pg_upgrade copies relations, not the other files of the data directory,
 * so the new cluster would start without uidgen.state and, with its clock
 * behind the old cluster's last ID, repeat IDs.  pg_upgrade starts both
 * clusters in binary-upgrade mode, always the old one before the new one,
 * with the same Unix-socket directory.  In that mode uidgen generates
 * nothing and starts no worker; instead the postmaster merges its state file
 * with a hand-off file in that directory, "uidgen.upgrade": the higher mark
 * and the later save time win, and both files get the result.  So the new
 * cluster finds the old one's mark, and resumes above it, without any step
 * by the operator.  Merging only ever raises a mark, so a stale hand-off
 * file left by an earlier upgrade cannot lower one.
 *
 * A cluster started in binary-upgrade mode that finds neither file cannot
 * know what the cluster it is upgraded from issued: it records that, and
 * refuses to generate after the upgrade until an operator supplies the old
 * state file (statefile_check_usable()).
 *
 * Everything here runs in the postmaster, from _PG_init(), before any other
 * process exists: no locking is needed.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/pg_list.h"
#include "postmaster/postmaster.h"
#include "utils/varlena.h"

#include "statefile.h"
#include "upgrade.h"

#define UPGRADE_FILE "uidgen.upgrade"

/* The hand-off file's path in the first Unix-socket directory, or NULL. */
static char *
upgrade_handoff_path(void)
{
	char	   *dirs = pstrdup(Unix_socket_directories ? Unix_socket_directories : "");
	List	   *list = NIL;

	if (!SplitDirectoriesString(dirs, ',', &list) || list == NIL)
		return NULL;
	return psprintf("%s/%s", (char *) linitial(list), UPGRADE_FILE);
}

/* Read the state file at "path"; false if missing, an error if corrupt. */
static bool
upgrade_read(const char *path, StateFileData *d)
{
	StateFileRead r = statefile_read_at(path, d);

	if (r == STATE_READ_CORRUPT)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("uidgen state file \"%s\" is unreadable or corrupt", path),
				 errdetail("pg_upgrade cannot carry uidgen's high-water mark over without it.")));
	return r == STATE_READ_OK;
}

/*
 * Binary-upgrade mode: merge this cluster's state file with the hand-off
 * file, and write the result to both.
 */
void
upgrade_hand_over(void)
{
	char	   *handoff = upgrade_handoff_path();
	StateFileData own;
	StateFileData other;
	bool		have_own;
	bool		have_other;

	have_own = upgrade_read(UIDGEN_STATE_FILE, &own);
	have_other = handoff != NULL && upgrade_read(handoff, &other);

	if (!have_own && !have_other)
	{
		memset(&own, 0, sizeof(own));
		own.settings = uidgen_settings;
		own.upgrade_unknown = true;
		(void) statefile_write_at(UIDGEN_STATE_FILE, &own, ERROR);
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("uidgen found no high-water mark to carry over in binary-upgrade mode"),
				 errdetail("No \"%s\" in the data directory and no hand-off file \"%s\".",
						   UIDGEN_STATE_FILE, handoff ? handoff : UPGRADE_FILE),
				 errhint("If the old cluster issued IDs with uidgen, make sure it has uidgen in \"shared_preload_libraries\" when pg_upgrade runs.")));
		return;
	}
	if (!have_own)
		own = other;
	else if (have_other)
	{
		own.hwm = Max(own.hwm, other.hwm);
		own.saved_at = Max(own.saved_at, other.saved_at);
		own.rebase_pending |= other.rebase_pending;
		if (own.upgrade_unknown && !other.upgrade_unknown)
		{
			own.upgrade_unknown = false;
			own.settings = other.settings;
		}
	}
	(void) statefile_write_at(UIDGEN_STATE_FILE, &own, ERROR);
	if (handoff != NULL)
		(void) statefile_write_at(handoff, &own, ERROR);
	ereport(LOG,
			(errmsg("uidgen carried its high-water mark over for pg_upgrade in \"%s\"",
					handoff ? handoff : UIDGEN_STATE_FILE)));
}
