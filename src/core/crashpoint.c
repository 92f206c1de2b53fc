/*-------------------------------------------------------------------------
 *
 * crashpoint.c
 *	  Crash points for tests (built only with UIDGEN_CRASH_POINTS=1).
 *
 * uidgen.crash_point names one point (superuser; in postgresql.conf for
 * the postmaster, the startup process and the background workers, or with
 * SET for one session).  A process that reaches it does what
 * uidgen.crash_action says:
 *	- kill: SIGKILL itself, as kill -9 would: nothing more runs, no exit
 *	  callback, and the postmaster restarts the cluster after a backend or
 *	  worker dies (the default);
 *	- wait: log "uidgen crash point "NAME" reached" and wait until the file
 *	  uidgen.crash_release exists in the data directory, then go on;
 *	- error: raise an ERROR there.
 * Every process that reaches the point acts; the point stays armed.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>
#include <unistd.h>

#include "miscadmin.h"
#include "utils/guc.h"

#include "core/crashpoint.h"

#define CRASH_RELEASE_FILE "uidgen.crash_release"

typedef enum CrashAction
{
	CRASH_KILL,
	CRASH_WAIT,
	CRASH_ERROR
} CrashAction;

static const struct config_enum_entry crash_actions[] = {
	{"kill", CRASH_KILL, false},
	{"wait", CRASH_WAIT, false},
	{"error", CRASH_ERROR, false},
	{NULL, 0, false}
};

static char *crash_point = NULL;
static int	crash_action = CRASH_KILL;

/* Define uidgen.crash_point and uidgen.crash_action (test builds only). */
void
crashpoint_define_settings(void)
{
	DefineCustomStringVariable("uidgen.crash_point",
							   "Test builds only: the crash point to act at.",
							   NULL, &crash_point, "", PGC_SUSET, 0,
							   NULL, NULL, NULL);
	DefineCustomEnumVariable("uidgen.crash_action",
							 "Test builds only: what a process does at the crash point.",
							 NULL, &crash_action, CRASH_KILL, crash_actions,
							 PGC_SUSET, 0, NULL, NULL, NULL);
}

/* A process reached crash point "name": act if it is the armed one. */
void
crashpoint_reach(const char *name)
{
	if (crash_point == NULL || strcmp(crash_point, name) != 0)
		return;
	ereport(LOG,
			(errmsg("uidgen crash point \"%s\" reached", name)));
	switch ((CrashAction) crash_action)
	{
		case CRASH_KILL:
			(void) kill(getpid(), SIGKILL);
			for (;;)
				pause();
		case CRASH_WAIT:
			/* interrupts too: a promotion waits for every backend's barrier */
			while (access(CRASH_RELEASE_FILE, F_OK) != 0)
			{
				CHECK_FOR_INTERRUPTS();
				pg_usleep(10000L);
			}
			ereport(LOG,
					(errmsg("uidgen crash point \"%s\" released", name)));
			break;
		case CRASH_ERROR:
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("uidgen crash point \"%s\"", name)));
	}
}
