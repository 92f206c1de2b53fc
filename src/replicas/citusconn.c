/*-------------------------------------------------------------------------
 *
 * citusconn.c
 *	  A Citus worker's connection to its coordinator, for block sequences
 *	  (replicas/citusblocks.c): one per backend, kept open.
 *
 * The coordinator is the node of group 0 in pg_dist_node; a worker
 * connects to it with libpq in the same database, as the current user,
 * with citus.node_conninfo's options; a call under another user (SET ROLE,
 * a SECURITY DEFINER function) connects again, as that user.  Every step
 * is bounded by uidgen.block_timeout: connecting, and each statement (a
 * deadline kept here, statement_timeout and lock_timeout there); a
 * statement whose caller gives a longer bound (seq_drop() and the others,
 * which wait for worker leases on the coordinator) by that bound,
 * statement_timeout set for it and set back at the next call.  The wait is
 * on the socket and the latch, so a cancel is answered at once; a connection
 * left mid-statement is closed at the next call.  A host name in
 * pg_dist_node is looked up by libpq without that bound, as Citus's own
 * connections are.  A failure to reach the coordinator closes the
 * connection and raises SQLSTATE 08006, naming the coordinator (also when
 * the coordinator's backend ended during the call: its FATAL, 57P01 for
 * instance, is the detail, not this node's error); an error the
 * coordinator returns is raised as it is, with its SQLSTATE.  The next call
 * connects again; a kept connection the coordinator closed while it was
 * idle (a restart) is noticed before use, and replaced.
 *
 * Locking: none; the state is the backend's own.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "libpq-fe.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

#include "clock/clock.h"
#include "core/compat.h"
#include "core/settings.h"
#include "replicas/citusconn.h"

/* This backend's connection to the coordinator, and what it is for. */
static PGconn *conn = NULL;
static Oid	conn_user = InvalidOid;
static bool conn_busy = false;
static bool conn_noticed = false;	/* a message came (see citusconn_usable) */
static PGresult *conn_result = NULL;	/* the last result, while they come */
static PQnoticeReceiver conn_receiver = NULL;	/* libpq's own */
static int	conn_timeout = -1;	/* its statement_timeout there; -1: unknown */
static char coord_where[300] = "";
static uint32 we_coordinator = 0;

/* Drop the connection; the next call connects again. */
static void
citusconn_disconnect(void)
{
	if (conn != NULL)
		PQfinish(conn);
	conn = NULL;
	PQclear(conn_result);
	conn_result = NULL;
	conn_timeout = -1;
	conn_busy = false;
}

/* The coordinator cannot be reached: drop the connection and fail (08006). */
static void
citusconn_unreachable(const char *why)
{
	char		first[256];
	char	   *nl;

	strlcpy(first, why ? why : "", sizeof(first));
	/* libpq's messages end in a newline and may go on: keep the first line */
	if ((nl = strchr(first, '\n')) != NULL)
		*nl = '\0';
	citusconn_disconnect();
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("the citus coordinator is unreachable for block sequences"),
			 errdetail("This node is a Citus worker: its block sequences are the coordinator's (%s), and it holds no IDs of this sequence now. %s",
					   coord_where, first),
			 errhint("Start the coordinator or restore the network to it; seq_next() serves again once it answers.")));
}

/* Wait until the socket is ready for "events", up to "deadline". */
static void
citusconn_wait(int events, uint64 deadline)
{
	for (;;)
	{
		uint64		now = clock_monotonic_ticks();
		int			rc;

		if (now >= deadline)
			citusconn_unreachable("No answer within uidgen.block_timeout.");
		if (PQsocket(conn) == PGINVALID_SOCKET)
			citusconn_unreachable(PQerrorMessage(conn));
		rc = WaitLatchOrSocket(MyLatch,
							   WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH | events,
							   PQsocket(conn),
							   (long) UIDGEN_TICKS_TO_MS(deadline - now) + 1,
							   uidgen_wait_event(&we_coordinator, "UidgenCitusCoordinator"));
		if (rc & WL_LATCH_SET)
		{
			ResetLatch(MyLatch);
			/* a cancel leaves the connection mid-statement: conn_busy drops it */
			CHECK_FOR_INTERRUPTS();
		}
		if (rc & events)
			return;
	}
}

/* Column "col" of SPI's first row, copied to the caller's memory. */
static char *
citusconn_spi_copy(int col)
{
	char	   *v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col);
	char	   *copy = SPI_palloc(strlen(v) + 1);

	strcpy(copy, v);
	return copy;
}

/* The coordinator's host and port (pg_dist_node, group 0), or ERROR. */
static void
citusconn_find_coordinator(char **host, char **port)
{
	SPI_connect();
	if (SPI_execute("SELECT nodename, nodeport::text FROM pg_catalog.pg_dist_node "
					"WHERE groupid = 0 AND noderole = 'primary' AND isactive LIMIT 1",
					true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("this citus worker does not know its coordinator"),
				 errdetail("pg_dist_node on this node has no active primary node in group 0; block sequences of a worker are the coordinator's."),
				 errhint("On the coordinator, run SELECT citus_set_coordinator_host(...) and let Citus sync its metadata to the workers.")));
	/* in the caller's memory, which SPI_finish() keeps */
	*host = citusconn_spi_copy(1);
	*port = citusconn_spi_copy(2);
	SPI_finish();
}

/* Notice receiver: note that a message came, then pass it to libpq's own. */
static void
citusconn_notice(void *arg, const PGresult *res)
{
	conn_noticed = true;
	conn_receiver(arg, res);
}

/* Connect to the coordinator, dropping a connection left unusable. */
static void
citusconn_connect(uint64 deadline)
{
	const char *node_conninfo = GetConfigOption("citus.node_conninfo", true, false);
	PQconninfoOption *opts = NULL;
	const char *keys[40];
	const char *values[40];
	char		seconds[16];
	char	   *host;
	char	   *port;
	int			n = 0;
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;

	/* left mid-statement (a cancel) or broken */
	citusconn_disconnect();
	citusconn_find_coordinator(&host, &port);
	snprintf(coord_where, sizeof(coord_where), "%s:%s", host, port);
	if (node_conninfo != NULL && node_conninfo[0] != '\0')
		opts = PQconninfoParse(node_conninfo, NULL);
	for (PQconninfoOption *o = opts; o != NULL && o->keyword != NULL && n < 30; o++)
		if (o->val != NULL && o->val[0] != '\0')
		{
			keys[n] = o->keyword;
			values[n++] = o->val;
		}
	/* libpq counts whole seconds, at least 2; our own deadline is the bound */
	snprintf(seconds, sizeof(seconds), "%d",
			 (int) Max(2, ((int64) uidgen_block_timeout + 999) / 1000));
	keys[n] = "host", values[n++] = host;
	keys[n] = "port", values[n++] = port;
	keys[n] = "dbname", values[n++] = get_database_name(MyDatabaseId);
	conn_user = GetUserId();
	keys[n] = "user", values[n++] = GetUserNameFromId(conn_user, false);
	keys[n] = "connect_timeout", values[n++] = seconds;
	keys[n] = "application_name", values[n++] = "uidgen citus blocks";
	keys[n] = NULL, values[n] = NULL;
	conn = PQconnectStartParams(keys, values, 0);
	if (opts != NULL)
		PQconninfoFree(opts);
	if (conn == NULL)
		citusconn_unreachable("Out of memory.");
	conn_receiver = PQsetNoticeReceiver(conn, citusconn_notice, NULL);
	conn_busy = true;
	while (st != PGRES_POLLING_OK)
	{
		if (st == PGRES_POLLING_FAILED || PQstatus(conn) == CONNECTION_BAD)
			citusconn_unreachable(PQerrorMessage(conn));
		citusconn_wait(st == PGRES_POLLING_READING ? WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE,
						 deadline);
		st = PQconnectPoll(conn);
	}
	conn_busy = false;
}

/* Raise the coordinator's error as this node's, with its SQLSTATE. */
static void
citusconn_rethrow(PGresult *res)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
	const char *hint = PQresultErrorField(res, PG_DIAG_MESSAGE_HINT);
	int			code = ERRCODE_INTERNAL_ERROR;
	char	   *m = pstrdup(msg ? msg : "unknown error on the citus coordinator");
	char	   *d = detail ? pstrdup(detail) : NULL;
	char	   *h = hint ? pstrdup(hint) : NULL;

	if (state != NULL && strlen(state) == 5)
		code = MAKE_SQLSTATE(state[0], state[1], state[2], state[3], state[4]);
	PQclear(res);
	ereport(ERROR,
			(errcode(code),
			 errmsg_internal("%s", m),
			 d ? errdetail_internal("%s", d) : 0,
			 h ? errhint("%s", h) : 0,
			 errcontext("on the citus coordinator %s", coord_where)));
}

/* Wait for the results of what was sent; the last one (the caller clears it). */
static PGresult *
citusconn_results(uint64 deadline)
{
	PGresult   *res;
	PGresult   *last;

	conn_busy = true;
	for (;;)
	{
		while (PQisBusy(conn))
		{
			citusconn_wait(WL_SOCKET_READABLE, deadline);
			if (!PQconsumeInput(conn))
				citusconn_unreachable(PQerrorMessage(conn));
		}
		if ((res = PQgetResult(conn)) == NULL)
			break;
		/* kept where citusconn_disconnect() frees it, should we fail */
		PQclear(conn_result);
		conn_result = res;
	}
	conn_busy = false;
	last = conn_result;
	conn_result = NULL;
	if (last == NULL)
		citusconn_unreachable(PQerrorMessage(conn));
	if (PQresultStatus(last) != PGRES_TUPLES_OK && PQresultStatus(last) != PGRES_COMMAND_OK)
	{
		if (PQresultErrorField(last, PG_DIAG_SQLSTATE) == NULL)
		{
			PQclear(last);
			citusconn_unreachable(PQerrorMessage(conn));
		}
		citusconn_rethrow(last);
	}
	return last;
}

/* Set the coordinator's statement_timeout of this connection to "ms". */
static void
citusconn_statement_timeout(int ms, uint64 deadline)
{
	char	   *set = psprintf("SET statement_timeout = %d", ms);

	if (!PQsendQuery(conn, set))
		citusconn_unreachable(PQerrorMessage(conn));
	PQclear(citusconn_results(deadline));
	conn_timeout = ms;
}

/*
 * Is the kept connection usable for this call: open, idle, for the current
 * user, and sent nothing while it was idle?  A coordinator shutting down
 * (or a backend of it terminated) sends a FATAL error to its idle clients,
 * which libpq passes to the notice receiver; it is read here without
 * waiting.
 */
static bool
citusconn_usable(void)
{
	if (conn == NULL || conn_busy || conn_user != GetUserId())
		return false;
	conn_noticed = false;
	/* read what came, then have it parsed (PQisBusy): an error to the receiver */
	if (!PQconsumeInput(conn))
		return false;
	(void) PQisBusy(conn);
	return !conn_noticed && PQstatus(conn) == CONNECTION_OK;
}

/*
 * Run "sql" with "nparams" text parameters (NULL for SQL NULL) on the
 * coordinator, as one statement in its own transaction there, bounded by
 * "timeout_ms" (and lock waits there by uidgen.block_timeout); its result,
 * which the caller clears.
 */
PGresult *
citusconn_exec_within(const char *sql, int nparams, const char *const *params, int timeout_ms)
{
	uint64		deadline = clock_monotonic_ticks() + UIDGEN_MS_TO_TICKS(timeout_ms);

	if (!citusconn_usable())
	{
		char	   *setup;

		citusconn_connect(deadline);
		setup = psprintf("SET lock_timeout = %d", uidgen_block_timeout);
		if (!PQsendQuery(conn, setup))
			citusconn_unreachable(PQerrorMessage(conn));
		PQclear(citusconn_results(deadline));
	}
	/* the bound of this statement there, if the last one had another */
	if (conn_timeout != timeout_ms)
		citusconn_statement_timeout(timeout_ms, deadline);
	if (!PQsendQueryParams(conn, sql, nparams, NULL, params, NULL, NULL, 0))
		citusconn_unreachable(PQerrorMessage(conn));
	return citusconn_results(deadline);
}

/* citusconn_exec_within(), bounded by uidgen.block_timeout. */
PGresult *
citusconn_exec(const char *sql, int nparams, const char *const *params)
{
	return citusconn_exec_within(sql, nparams, params, uidgen_block_timeout);
}
