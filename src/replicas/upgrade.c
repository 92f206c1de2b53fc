/*-------------------------------------------------------------------------
 *
 * upgrade.c
 *	  Carry the high-water mark across pg_upgrade.
 *
 * pg_upgrade copies relations, not the other files of the data directory,
 * so the new cluster would start without uidgen.state and, with its clock
 * behind the old cluster's last ID, repeat IDs.  pg_upgrade starts both
 * clusters in binary-upgrade mode, the old one before the new one, with the
 * same Unix-socket directory, and it creates "pg_upgrade_output.d" in the
 * new cluster's data directory before it starts either.  In that mode
 * uidgen generates nothing and starts no worker; the postmaster instead
 *
 *	- in the old cluster (no pg_upgrade_output.d), writes its state to the
 *	  hand-off file "uidgen.upgrade" in the socket directory;
 *	- in the new cluster, takes the mark, save time and settings from a
 *	  hand-off file written during this run (not older than
 *	  pg_upgrade_output.d, a regular file of this user), keeping its own mark
 *	  if that is higher.  Without one it cannot know what the old cluster
 *	  issued: it records that, and refuses to generate after the upgrade
 *	  until an operator supplies the old state file (statefile.c).
 *
 * A new cluster without uidgen preloaded would do none of this, so there
 * uidgen refuses to load: pg_upgrade's check of the libraries the old
 * cluster uses loads it in the new cluster, and stops.
 *
 * Everything here runs in the postmaster, from _PG_init(), before any other
 * process exists: no locking is needed.
 *
 * What is durable before what (each write through a temporary file, fsync
 * and rename, statefile_write_at()):
 *	old cluster:	1. the hand-off file, with this cluster's state (a zero
 *					   mark if it has none); its own state file is untouched
 *	new cluster:	1. its state file, with the higher of the two marks and
 *					   the old cluster's settings, before any ID can be
 *					   issued (the next start); without a fresh hand-off
 *					   file, its state file marked "upgraded without
 *					   state", which refuses to generate
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "postmaster/postmaster.h"
#include "utils/varlena.h"

#include "clock/statefile.h"
#include "replicas/upgrade.h"

#define UPGRADE_FILE "uidgen.upgrade"
#define UPGRADE_OUTPUT_DIR "pg_upgrade_output.d"

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
				 errdetail("pg_upgrade cannot carry uidgen's high-water mark over without it."),
				 errhint("If it is a hand-off file left by an earlier pg_upgrade, remove it and run pg_upgrade again.")));
	return r == STATE_READ_OK;
}

/* This cluster's state, or a zero mark under the current settings; false if none. */
static bool
upgrade_read_own(StateFileData *own)
{
	if (upgrade_read(UIDGEN_STATE_FILE, own))
		return true;
	memset(own, 0, sizeof(*own));
	own->settings = uidgen_settings;
	return false;
}

/* Is the hand-off file a regular file of ours, written at or after "since"? */
static bool
upgrade_handoff_fresh(const char *path, const struct stat *since)
{
	struct stat st;

	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
		return false;
	if (st.st_mtim.tv_sec != since->st_mtim.tv_sec)
		return st.st_mtim.tv_sec > since->st_mtim.tv_sec;
	return st.st_mtim.tv_nsec >= since->st_mtim.tv_nsec;
}

/* Old cluster: hand this cluster's state over (a zero mark if it has none). */
static void
upgrade_send(const char *handoff)
{
	StateFileData own;

	if (handoff == NULL)
		return;					/* the new cluster will refuse */
	(void) upgrade_read_own(&own);
	(void) statefile_write_at(handoff, &own, ERROR);
	ereport(LOG,
			(errmsg("uidgen handed its high-water mark over to pg_upgrade in \"%s\"", handoff)));
}

/* New cluster: take the old cluster's state from this run's hand-off file. */
static void
upgrade_receive(const char *handoff, const struct stat *run_start)
{
	StateFileData own;
	StateFileData old;
	bool		have_own = upgrade_read_own(&own);

	if (handoff == NULL || !upgrade_handoff_fresh(handoff, run_start) ||
		!upgrade_read(handoff, &old))
	{
		own.upgrade_unknown = true;
		(void) statefile_write_at(UIDGEN_STATE_FILE, &own, ERROR);
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("uidgen found no high-water mark handed over by the old cluster"),
				 errdetail("No hand-off file \"%s\" was written during this pg_upgrade run.",
						   handoff ? handoff : UPGRADE_FILE),
				 errhint("If the old cluster issued IDs with uidgen, give it uidgen in \"shared_preload_libraries\" and uidgen 0.2.0 or later before running pg_upgrade.")));
		return;
	}
	/* a new cluster, not a copy of the old one: vouch for it at start-up */
	memset(&old.vouched, 0, sizeof(old.vouched));
	if (have_own)
	{
		old.hwm = Max(old.hwm, own.hwm);
		old.saved_at = Max(old.saved_at, own.saved_at);
		old.rebase_pending |= own.rebase_pending;
	}
	(void) statefile_write_at(UIDGEN_STATE_FILE, &old, ERROR);
	ereport(LOG,
			(errmsg("uidgen took over the high-water mark of the old cluster from \"%s\"", handoff)));
}

/* Binary-upgrade mode, loaded later than at start-up: refuse (see above). */
void
upgrade_refuse_late_load(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("uidgen must be in \"shared_preload_libraries\" of both clusters when pg_upgrade runs"),
			 errdetail("Only a preloaded uidgen can carry its high-water mark over to the new cluster."),
			 errhint("Add uidgen to \"shared_preload_libraries\" in the new cluster's configuration and run pg_upgrade again.")));
}

/* Binary-upgrade mode, preloaded: hand the mark over, or take it over. */
void
upgrade_hand_over(void)
{
	struct stat run_start;

	if (IsUnderPostmaster)
		return;					/* EXEC_BACKEND: the postmaster did it */
	if (stat(UPGRADE_OUTPUT_DIR, &run_start) == 0)
		upgrade_receive(upgrade_handoff_path(), &run_start);
	else
		upgrade_send(upgrade_handoff_path());
}
